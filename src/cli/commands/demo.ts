import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { AppContext } from '../../app/context.js';
import { type Config, DEFAULT_SERVE_PORT, ENV } from '../../config.js';
import { UsageError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { Metrics } from '../../metrics/index.js';
import { type CommandIo, intFlag } from '../command.js';
import { defineCommand } from '../define-command.js';
import { renderDemoReport, statusPageLines } from '../demo-report.js';
import { createProgress } from '../progress.js';
import { failureLine, signalExitCode } from '../run-outcome.js';
import { quietOnTerminal } from './sync.js';

/** How often `demo --serve` syncs the records that keep arriving. */
const SYNC_EVERY_MS = 3000;

const usage = `Usage: ledger-indexer demo [--records N] [--arrivals PER_S] [--seed S] [--serve [--http-port P]]

The zero-setup tour: starts the reference ledger server in-process on a free loopback port
(--records records, default 20000, at most 1000000, plus --arrivals new ones a second, default
20, at most 10000), syncs it into the embedded database (PGlite) with a progress display, and
prints a short report: records, movements and volumes by action and token (from the
ledger_movements view), and the records not final yet.

  --serve         then keep going: the simulator goes on, a sync runs every ${SYNC_EVERY_MS / 1000} s, and the
                  HTTP surface answers on http://127.0.0.1:P (/ the status page, /health, /ready,
                  /status, /metrics) until SIGINT/SIGTERM, which end it with exit 0
  --http-port P   its port (default: $${ENV.httpPort}, else ${DEFAULT_SERVE_PORT}; 0 picks a free one)

The database lives in a fresh temporary folder, removed at the end, unless
$${ENV.dataDir} names a folder to keep it in: a later demo of the same ledger (same --seed
and --records) syncs on from it, one of another ledger empties it and starts fresh.
Exit codes: 0 done (or --serve stopped); 1 a failure; 2 bad flags or settings; 130/143 stopped
by SIGINT/SIGTERM before the report.`;

export const command = defineCommand({
  name: 'demo',
  usage,
  flags: {
    records: { type: 'string' },
    arrivals: { type: 'string' },
    seed: { type: 'string' },
    serve: { type: 'boolean' },
    'http-port': { type: 'string' },
  },
  async run({ values, io, config: loadConfig, logger, onClose }) {
    const records = intFlag('records', values.records, 1, 1_000_000) ?? 20_000;
    const arrivals = intFlag('arrivals', values.arrivals, 0, 10_000) ?? 20;
    const serve = values.serve === true;
    if (values['http-port'] !== undefined && !serve) throw new UsageError('--http-port needs --serve');
    const keptDir = io.env[ENV.dataDir]?.trim() || undefined;
    const base = loadConfig({ httpPort: values['http-port'] });
    const port = base.httpPort ?? DEFAULT_SERVE_PORT;
    const log = logger(quietOnTerminal(base, io));
    const { createSimulator } = await import('../../simulator/index.js');
    const { createContext } = await import('../../app/context.js');

    const dataDir = keptDir ?? (await mkdtemp(join(tmpdir(), 'ledger-indexer-demo-')));
    if (!keptDir) onClose(() => rm(dataDir, { recursive: true, force: true }));
    const simulator = createSimulator({ records, arrivalsPerSecond: arrivals, seed: values.seed ?? 1 });
    onClose(() => simulator.close());
    const { url } = await simulator.listen({ host: '127.0.0.1', port: 0 });
    io.stderr.write(
      `demo: ledger simulator with ${records} records on ${url}\ndemo: database in ${dataDir}\n`,
    );
    // A local simulator: no request budget to respect, and enough pages in flight to keep both cores busy.
    const config: Config = {
      ...base,
      ledgerBaseUrl: url,
      // The simulator serves every endpoint in the interface document's spelling.
      ledgerListUrl: undefined,
      ledgerLookups: 'interface',
      databaseUrl: undefined,
      dataDir,
      requestsPerSecond: 0,
      concurrency: Math.max(base.concurrency, 16),
      httpHost: '127.0.0.1',
    };
    const started = Date.now();
    // Counted for /metrics under --serve: the requests to the simulator and the writes.
    const metrics = serve ? (await import('../../metrics/index.js')).createMetrics() : undefined;
    const ctx = await createContext({ config, logger: log, metrics });
    onClose(() => ctx.close());
    if (keptDir) await startFreshIfOtherLedger(ctx, io);
    // A demo killed in a kept folder left its lease behind: this run takes over at once.
    const { releaseDeadLeases } = await import('../stale-leases.js');
    await releaseDeadLeases({ database: ctx.database, store: ctx.store, logger: log });
    const stopped = await syncAndReport(ctx, io, (Date.now() - started) / 1000);
    if (stopped !== undefined) return stopped;
    if (keptDir) io.stdout.write(`database kept in ${keptDir}\n`);
    if (!serve || metrics === undefined) {
      io.stdout.write(`\n${statusPageLines({ port, syncEverySeconds: SYNC_EVERY_MS / 1000 }).join('\n')}\n`);
      return 0;
    }
    return serveDemo({ ctx, io, metrics, port, logger: log, onClose });
  },
});

/**
 * A kept data folder holding a mirror of another ledger (another seed or record count: its
 * oldest record is not this simulator's) is emptied and migrated again, not mixed with this one.
 * A folder of the same ledger is synced on from where it stands.
 */
async function startFreshIfOtherLedger(ctx: AppContext, io: CommandIo): Promise<void> {
  const found = await ctx.service.check();
  if (found.state !== 'other') return;
  const { dropMirror } = await import('../../db/stores/pinned-anchor.js');
  const { migrateDatabase } = await import('../../db/schema/migrate-database.js');
  await dropMirror(ctx.database);
  await migrateDatabase(ctx.database);
  io.stderr.write(
    `demo: the data folder held a mirror of another ledger (its record rawId ${found.anchor.rawId} is not ` +
      `this simulator's): starting fresh\n`,
  );
}

/**
 * The backfill with its progress display, a tail pass, then the report. Resolves to the exit
 * code when a signal stopped it, else `undefined`.
 */
async function syncAndReport(
  ctx: AppContext,
  io: CommandIo,
  setupSeconds: number,
): Promise<number | undefined> {
  const { syncOnce } = await import('../../app/sync-once.js');
  const { readActivity } = await import('../../db/queries/action-report.js');
  const { countNonFinal } = await import('../../db/queries/stream-queries.js');
  const progress = createProgress({ out: io.stderr, tty: io.stderr.isTTY === true });
  const syncStarted = Date.now();
  const result = await syncOnce(ctx, { signal: io.signal, onPage: (event) => progress.page(event) });
  progress.done();
  const walk = result.streams[0];
  const seconds = (Date.now() - syncStarted) / 1000;
  io.stdout.write(
    `synced ${walk?.counts.inserted ?? 0} records (${readBy(walk, ctx.client.keyCount())}) in ${seconds.toFixed(1)}s, ` +
      `${Math.round((walk?.records ?? 0) / seconds)} records/s\n(database set up in ${setupSeconds.toFixed(1)}s)\n` +
      `${dialectReason(walk?.dialect, ctx.config.ledgerPaging)}\n`,
  );
  if (result.stopped) return signalExitCode(io.signal);
  // Records kept arriving during the backfill: a tail pass picks them up, still unsettled.
  const tail = await syncOnce(ctx, { signal: io.signal, refreshTokens: false });
  const caught = tail.streams[0];
  io.stdout.write(
    `tail pass: ${caught?.counts.inserted ?? 0} records that arrived meanwhile (${readBy(caught, ctx.client.keyCount())})\n\n`,
  );
  const activity = await readActivity(ctx.database.db);
  const nonFinal = await countNonFinal(ctx.database.db);
  io.stdout.write(`${renderDemoReport(activity, nonFinal)}\n`);
  return tail.stopped ? signalExitCode(io.signal) : undefined;
}

/**
 * `demo --serve`: the HTTP surface over the demo's database, and a sync every
 * {@link SYNC_EVERY_MS} until SIGINT/SIGTERM (exit 0, like `serve`). A failed pass is told on
 * stderr and the next one tries again: the demo stays up.
 */
async function serveDemo(input: {
  ctx: AppContext;
  io: CommandIo;
  metrics: Metrics;
  port: number;
  logger: Logger;
  onClose(close: () => unknown): void;
}): Promise<number> {
  const { ctx, io, metrics, port, logger } = input;
  const { openHttpSurface } = await import('../../app/http-routes.js');
  const { syncOnce } = await import('../../app/sync-once.js');
  const surface = await openHttpSurface({
    config: ctx.config,
    database: ctx.database,
    logger,
    metrics,
    port,
    signal: io.signal,
    shared: { observer: metrics.client },
  });
  input.onClose(() => surface.close());
  const lines = statusPageLines({ serving: surface.url, port, syncEverySeconds: SYNC_EVERY_MS / 1000 });
  io.stdout.write(`\n${lines.join('\n')}\n`);
  while (!io.signal.aborted) {
    try {
      await sleep(SYNC_EVERY_MS, undefined, { signal: io.signal });
      await syncOnce(ctx, { signal: io.signal, refreshTokens: false });
    } catch (error) {
      if (io.signal.aborted) break;
      logger.warn({ err: error }, 'demo sync failed');
      io.stderr.write(`ledger-indexer demo: a sync failed: ${failureLine(error, { resumes: true })}\n`);
    }
  }
  return 0;
}

/** Why the lists were read in the dialect they were, for the demo's report (lines of at most 100 columns). */
export function dialectReason(dialect: 'key' | 'page' | undefined, paging: 'auto' | 'key' | 'page'): string {
  if (dialect === 'key') {
    const chosen =
      paging === 'key' ? 'as LEDGER_PAGING=key asks' : 'the service answered by key when asked once';
    return (
      `read by key (/txs?cursor=…&order=asc): ${chosen}\n` +
      "(the deployed service's own clients read so: a tenth of the requests of page numbers)"
    );
  }
  const chosen = paging === 'page' ? 'as LEDGER_PAGING=page asks' : 'the service does not answer by key';
  return `read by page number (/txs?page=…, ten records a page): ${chosen}`;
}

/** How a walk read its list, for a line of output: `12 requests by key, 100 a request`, or `120 pages`. */
export function readBy(
  walk: { dialect?: 'key' | 'page' | undefined; pages: number } | undefined,
  count: number,
): string {
  if (walk?.dialect === 'key') return `${walk.pages} requests by key, ${count} a request`;
  return `${walk?.pages ?? 0} pages`;
}
