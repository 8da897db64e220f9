import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { lastAtMost } from './columns.js';
import { type ControlTarget, handleControl } from './control-routes.js';
import { FaultInjector } from './faults.js';
import { SimulatedLedger } from './ledger.js';
import { json, matchPublicRoute, notFound, type PublicRouteContext, type Reply } from './public-routes.js';
import { seedNumber } from './random.js';
import { checkSubmission, isRefusal } from './submit-tx.js';
import type {
  GroundTruthRecord,
  Simulator,
  SimulatorFaults,
  SimulatorOptions,
  SimulatorStats,
} from './types.js';

const TICK_MS = 50;
const MAX_BODY_BYTES = 64 * 1024;
const DEFAULT_HISTORY_END_MS = Date.UTC(2026, 0, 1);

function readBody(req: IncomingMessage): Promise<string | null> {
  return new Promise((resolve, reject) => {
    let size = 0;
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        resolve(null);
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

function checkOptions(options: SimulatorOptions): void {
  const nonNegative = [
    'records',
    'arrivalsPerSecond',
    'packageDelayMs',
    'burnTargetDelayMs',
    'jsonCacheSize',
  ] as const;
  for (const key of nonNegative) {
    const value = options[key];
    if (value !== undefined && (!Number.isFinite(value) || value < 0))
      throw new RangeError(`${key} must be a number >= 0`);
  }
  if (options.records !== undefined && !Number.isInteger(options.records))
    throw new RangeError('records must be whole');
  const hole = options.holeRate;
  if (hole !== undefined && !(hole >= 0 && hole < 1)) throw new RangeError('holeRate must be in [0, 1)');
}

/**
 * Creates the reference ledger server: a seeded data set held in memory, live arrivals, status
 * changes, faults on demand, and the `/_sim/` control endpoints. Nothing listens until
 * {@link Simulator.listen}.
 */
export function createSimulator(options: SimulatorOptions = {}): Simulator {
  checkOptions(options);
  const now = options.now ?? Date.now;
  const seed = seedNumber(options.seed ?? 1);
  const ledger = new SimulatedLedger({
    seed,
    records: options.records ?? 1000,
    holeRate: options.holeRate ?? 0.01,
    packageDelayMs: options.packageDelayMs ?? 2000,
    burnTargetDelayMs: options.burnTargetDelayMs ?? 5000,
    jsonCacheSize: options.jsonCacheSize ?? 300_000,
    historyEndMs: options.historyEndMs ?? DEFAULT_HISTORY_END_MS,
  });
  const injector = new FaultInjector(seed, options.faults);
  let perSecond = options.arrivalsPerSecond ?? 0;
  let running = true;
  let owed = 0;
  let lastTick = now();
  let stats: SimulatorStats = {};
  const lastNonce = new Map<string, number>();
  const hanging = new Set<ServerResponse>();
  let server: Server | undefined;
  let timer: NodeJS.Timeout | undefined;

  const count = (route: string, status: string | number): void => {
    const byStatus = stats[route] ?? {};
    byStatus[String(status)] = (byStatus[String(status)] ?? 0) + 1;
    stats[route] = byStatus;
  };

  const tick = (): void => {
    const t = now();
    if (running && perSecond > 0) {
      owed += ((t - lastTick) * perSecond) / 1000;
      const due = Math.floor(owed);
      if (due > 0) {
        owed -= due;
        ledger.arrive(due, t);
      }
    }
    lastTick = t;
    ledger.advance(t);
  };

  const routeContext: PublicRouteContext = {
    ledger,
    keyPaging: options.keyPaging ?? false,
    recordFaults: () => injector.faults,
    submit: (body) => {
      const result = checkSubmission(ledger, body, lastNonce, now());
      if (isRefusal(result)) return json(result.status, { error: result.error });
      ledger.appendSubmitted(result);
      if ((options.packageDelayMs ?? 2000) === 0) ledger.advance(now());
      return json(200, { status: 'ok' });
    },
  };

  const send = (res: ServerResponse, reply: Reply, truncate = false): void => {
    const whole = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body;
    const body = truncate ? whole.subarray(0, Math.floor(whole.length / 2)) : whole;
    res.writeHead(reply.status, {
      'content-type': reply.contentType ?? 'application/json; charset=utf-8',
      'content-length': body.length,
      ...reply.headers,
    });
    res.end(body);
  };

  const servePublic = async (
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    params: URLSearchParams,
  ) => {
    const method = req.method ?? 'GET';
    const route = matchPublicRoute(routeContext, method, path, params);
    const name = route?.name ?? 'unknown';
    const client = (req.headers['x-client-id'] as string | undefined) ?? req.socket.remoteAddress ?? '';
    const decision = injector.decide(client, now());
    if (decision.kind === 'hang') {
      hanging.add(res);
      res.on('close', () => {
        hanging.delete(res);
        count(name, 'hang');
      });
      req.resume();
      return;
    }
    res.on('finish', () => count(name, res.statusCode));
    if (decision.kind === 'rate_limited') {
      send(res, {
        ...json(429, { error: 'err_too_many_requests' }),
        headers: { 'retry-after': String(decision.retryAfterSeconds) },
      });
      return;
    }
    const delayMs = decision.delayMs;
    const bodyText = route?.needsBody ? await readBody(req) : null;
    if (!route?.needsBody) req.resume();
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    if (res.destroyed) return;
    if (decision.kind === 'error') {
      if (decision.status === 503) {
        send(res, {
          status: 503,
          body: '<html><body>503 Service Temporarily Unavailable</body></html>',
          contentType: 'text/html',
        });
      } else {
        send(res, json(500, { error: 'err_internal' }));
      }
      return;
    }
    ledger.advance(now());
    if (!route) {
      send(res, notFound());
      return;
    }
    let body: unknown;
    if (route.needsBody) {
      if (bodyText === null) return send(res, json(413, { error: 'err_body_too_large' }));
      body = parseJson(bodyText ?? '');
      if (body === undefined) return send(res, json(400, { error: 'err_invalid_json' }));
    }
    const reply = route.answer(body);
    send(res, reply, decision.truncate && reply.status === 200);
  };

  const serveControl = async (
    req: IncomingMessage,
    res: ServerResponse,
    path: string,
    params: URLSearchParams,
  ) => {
    const method = req.method ?? 'GET';
    const name = `${method} ${path}`;
    res.on('finish', () => count(name, res.statusCode));
    let body: unknown;
    if (method === 'POST') {
      const text = await readBody(req);
      body = text ? parseJson(text) : undefined;
    } else {
      req.resume();
    }
    ledger.advance(now());
    const reply = handleControl({ target: control, method, path, params, body, res });
    if (reply === null) return send(res, notFound());
    if (reply instanceof Promise) return reply;
    send(res, reply);
  };

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    const path = q < 0 ? raw : raw.slice(0, q);
    const params = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
    const work = path.startsWith('/_sim/')
      ? serveControl(req, res, path, params)
      : servePublic(req, res, path, params);
    work.catch((error: unknown) => {
      if (!res.headersSent) send(res, json(500, { error: 'err_internal', message: String(error) }));
      else res.destroy();
    });
  };

  const firstAfter = (end: number, after: number | undefined): number =>
    after === undefined ? 0 : lastAtMost(end, (i) => ledger.table.rawId.get(i), after) + 1;
  function* records(opts: { afterRawId?: number } = {}): IterableIterator<GroundTruthRecord> {
    const end = ledger.table.count;
    const faults = injector.faults;
    for (let pos = firstAfter(end, opts.afterRawId); pos < end; pos++) yield ledger.groundTruth(pos, faults);
  }
  function* recordLines(afterRawId: number | undefined): IterableIterator<string> {
    const end = ledger.table.count;
    const faults = injector.faults;
    for (let pos = firstAfter(end, afterRawId); pos < end; pos++) yield ledger.groundTruthText(pos, faults);
  }

  const control: ControlTarget = {
    async listen({ host = '127.0.0.1', port = 0 } = {}) {
      if (server) throw new Error('the simulator is already listening');
      const s = createServer({ keepAlive: true }, handle);
      s.keepAliveTimeout = 30_000;
      server = s;
      await new Promise<void>((resolve, reject) => {
        s.once('error', reject);
        s.listen(port, host, () => {
          s.off('error', reject);
          resolve();
        });
      });
      lastTick = now();
      timer = setInterval(tick, TICK_MS);
      timer.unref();
      const address = s.address() as AddressInfo;
      const shown = address.family === 'IPv6' ? `[${address.address}]` : address.address;
      return { url: `http://${shown}:${address.port}` };
    },
    async close() {
      if (timer) clearInterval(timer);
      timer = undefined;
      for (const res of hanging) res.destroy();
      hanging.clear();
      const s = server;
      server = undefined;
      if (!s) return;
      await new Promise<void>((resolve) => {
        s.close(() => resolve());
        s.closeAllConnections();
      });
    },
    addRecords(n) {
      const head = ledger.arrive(n, now());
      if ((options.packageDelayMs ?? 2000) === 0) ledger.advance(now());
      return head;
    },
    pauseArrivals() {
      running = false;
    },
    resumeArrivals() {
      if (!running) lastTick = now();
      running = true;
    },
    settleAll() {
      ledger.advance(now(), true);
    },
    setFaults: (partial: Partial<SimulatorFaults>) => injector.update(partial),
    faults: () => injector.faults,
    records,
    recordLines,
    count: () => ledger.table.count,
    headRawId: () => ledger.headRawId(),
    stats: () => structuredClone(stats),
    arrivalState: () => ({ running, perSecond }),
    setArrivalRate(rate) {
      perSecond = rate;
    },
    resetStats() {
      stats = {};
    },
    details: () => ({
      records: ledger.table.count,
      headRawId: ledger.headRawId(),
      pending: ledger.pendingCount(),
      cachedRecords: ledger.cacheSize(),
      accounts: ledger.table.accounts.length,
      arrivals: { running, perSecond },
      memory: process.memoryUsage(),
      cpuUsage: process.cpuUsage(),
    }),
  };
  return control;
}
