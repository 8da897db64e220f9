import type { IncomingMessage, ServerResponse } from 'node:http';
import { type ControlTarget, handleControl } from './control-routes.js';
import type { FaultInjector } from './faults.js';
import type { SimulatedLedger } from './ledger.js';
import { json, matchPublicRoute, notFound, type PublicRouteContext, type Reply } from './public-routes.js';
import type { RequestStats } from './request-stats.js';

const MAX_BODY_BYTES = 64 * 1024;

/** What answering a request needs. */
export interface RequestContext {
  ledger: SimulatedLedger;
  injector: FaultInjector;
  routes: PublicRouteContext;
  control: ControlTarget;
  stats: RequestStats;
  /** Answers the `hang` fault holds open. */
  hanging: Set<ServerResponse>;
  now: () => number;
}

/**
 * Creates the request handler: `/_sim/` control endpoints as they are, the public endpoints
 * through the fault injector. Every answer is counted by route and status.
 */
export function createRequestHandler(
  ctx: RequestContext,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const raw = req.url ?? '/';
    const q = raw.indexOf('?');
    const path = q < 0 ? raw : raw.slice(0, q);
    const params = new URLSearchParams(q < 0 ? '' : raw.slice(q + 1));
    const work = path.startsWith('/_sim/')
      ? serveControl(ctx, req, res, path, params)
      : servePublic(ctx, req, res, path, params);
    work.catch((error: unknown) => {
      if (!res.headersSent) send(res, json(500, { error: 'err_internal', message: String(error) }));
      else res.destroy();
    });
  };
}

async function servePublic(
  ctx: RequestContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  params: URLSearchParams,
): Promise<void> {
  const { ledger, now } = ctx;
  const method = req.method ?? 'GET';
  const route = matchPublicRoute(ctx.routes, method, path, params);
  const name = route?.name ?? 'unknown';
  const client = (req.headers['x-client-id'] as string | undefined) ?? req.socket.remoteAddress ?? '';
  const decision = ctx.injector.decide(client, now());
  if (decision.kind === 'hang') {
    ctx.hanging.add(res);
    res.on('close', () => {
      ctx.hanging.delete(res);
      ctx.stats.count(name, 'hang', route?.dialect);
    });
    req.resume();
    return;
  }
  res.on('finish', () => ctx.stats.count(name, res.statusCode, route?.dialect));
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
}

async function serveControl(
  ctx: RequestContext,
  req: IncomingMessage,
  res: ServerResponse,
  path: string,
  params: URLSearchParams,
): Promise<void> {
  const method = req.method ?? 'GET';
  const name = `${method} ${path}`;
  res.on('finish', () => ctx.stats.count(name, res.statusCode));
  let body: unknown;
  if (method === 'POST') {
    const text = await readBody(req);
    body = text ? parseJson(text) : undefined;
  } else {
    req.resume();
  }
  ctx.ledger.advance(ctx.now());
  const reply = handleControl({ target: ctx.control, method, path, params, body, res });
  if (reply === null) return send(res, notFound());
  const answer = reply instanceof Promise ? await reply : reply;
  if (answer !== undefined) send(res, answer);
}

function send(res: ServerResponse, reply: Reply, truncate = false): void {
  const whole = typeof reply.body === 'string' ? Buffer.from(reply.body) : reply.body;
  const body = truncate ? whole.subarray(0, Math.floor(whole.length / 2)) : whole;
  res.writeHead(reply.status, {
    'content-type': reply.contentType ?? 'application/json; charset=utf-8',
    'content-length': body.length,
    ...reply.headers,
  });
  res.end(body);
}

/** The request's body as text; `null` when it is larger than {@link MAX_BODY_BYTES}. */
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
