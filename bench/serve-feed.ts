/**
 * The change feed under the serve scenario: SSE clients on one `serve`, new records written the
 * way a user's mirror gets them (added to the simulator, then `ledger-indexer sync` tails them
 * in), and the time from each writing transaction's commit to each client's receipt of its
 * events. The commit time is when PostgreSQL delivered the transaction's commit notification
 * (`ledger_feed_commit`, sent by the feed's triggers) to the bench's own listener: the moment the
 * serve process's listener hears it too, so the stamping step after the commit, the reading of
 * the stamped events and their delivery are all inside the figure.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import pg from 'pg';
import type { ScenarioDatabase } from './databases.js';
import type { IndexerSetup } from './indexer-sync.js';
import { indexerEnv, lastLine } from './indexer-sync.js';
import { type CoresUsed, startCpuMeter } from './proc-cpu.js';
import { spawnMeasured } from './processes.js';
import {
  type ClientLog,
  COMMIT_CLOCK_NAME,
  type CommitClock,
  type FeedClients,
  openFeedClients,
  startCommitClock,
} from './serve-feed-clients.js';
import { type LatencyFigures, latencyFigures } from './serve-load.js';
import type { ServeProcess } from './serve-process.js';
import type { SimulatorProcess } from './simulator-process.js';

/** What one phase of the feed measured: `clients` streams while `rounds` tails were written. */
export interface FeedPhaseFigures {
  clients: number;
  rounds: number;
  /** New records each round added to the service and tailed in by one `sync`. */
  recordsPerRound: number;
  /** Writing transactions of the phase (stamped), and those matched to a commit heard. */
  commits: number;
  matchedCommits: number;
  /** Events of the phase, as the database holds them. */
  events: number;
  /** Clients that received every event of the phase, in order, none twice. */
  completeClients: number;
  /** Commit to receipt, over every event every client received. */
  commitToClientMs: LatencyFigures;
  /**
   * Commit to the first receipt of any of its events by any client, over the commits: what the
   * stamping, the reading and the first write took, before the handing out to every client.
   */
  commitToFirstClientMs: LatencyFigures;
  /** `sync` wall time of each round (its process's start included), ms. */
  syncWallMs: number[];
  /**
   * The bench's own event loop while its clients read (99th percentile delay, ms): a receipt is
   * noted when the loop gets to the socket, so this is part of the figure, not of the server.
   */
  benchLoopDelayP99Ms: number;
  /** The serve process's resident memory: the most sampled during the phase, and its peak since it started. */
  serveRssBytes: number | null;
  servePeakRssBytes: number | null;
  /** Backends of the mirror's database listening for notifications (the bench's own left out). */
  databaseListeners: number;
  /** Connections of the serve process to the database, by application name. */
  serveConnections: Record<string, number>;
  cpu: CoresUsed;
}

/** A stamped transaction of the phase and, once matched, when its commit was heard. */
interface StampedTransaction {
  first: number;
  last: number;
  events: number;
  committedAt: number | null;
}

/**
 * Runs one phase: opens `clients` streams from the head, then `rounds` times adds
 * `recordsPerRound` records to the simulator (settled: final at once, so a tail writes them in
 * one transaction and re-reads nothing) and runs `sync`, waiting each time until every client
 * holds the round's events.
 */
export async function runFeedPhase(input: {
  setup: IndexerSetup;
  serve: ServeProcess;
  simulator: SimulatorProcess;
  database: ScenarioDatabase;
  clients: number;
  rounds: number;
  recordsPerRound: number;
}): Promise<FeedPhaseFigures> {
  const { serve, database } = input;
  const closers: Array<() => unknown> = [];
  try {
    const probe = new pg.Client({ connectionString: database.url, application_name: 'ledger-bench-probe' });
    probe.on('error', () => undefined);
    closers.push(() => probe.end());
    await probe.connect();
    const clock = await startCommitClock(database.url);
    closers.push(() => clock.close());
    const feed = await openFeedClients({ origin: serve.origin, count: input.clients, timeoutMs: 30_000 });
    closers.push(() => feed.close());
    const loop = monitorEventLoopDelay({ resolution: 5 });
    loop.enable();
    closers.push(() => loop.disable());
    let rss = serve.rssBytes();
    const sampler = setInterval(() => {
      rss = Math.max(rss ?? 0, serve.rssBytes() ?? 0) || null;
    }, 100);
    closers.push(() => clearInterval(sampler));
    const meter = await startCpuMeter({
      serve: () => [serve.pid],
      database: () => backendsOf(probe),
      bench: () => [process.pid],
    });
    // The clients joined at the head: nothing to wait for but the stamps.
    const startHead = await deliveredHead(probe, [], 30_000);
    const stamped: StampedTransaction[] = [];
    const syncWallMs: number[] = [];
    for (let round = 0; round < input.rounds; round++) {
      stamped.push(
        ...(await writeRound(input, {
          probe,
          clock,
          feed,
          syncWallMs,
          after: stamped.at(-1)?.last ?? startHead,
        })),
      );
    }
    const cpu = await meter.stop();
    const connections = await connectionsOf(probe);
    return {
      clients: input.clients,
      rounds: input.rounds,
      recordsPerRound: input.recordsPerRound,
      commits: stamped.length,
      matchedCommits: stamped.filter((t) => t.committedAt !== null).length,
      events: stamped.reduce((sum, t) => sum + t.events, 0),
      completeClients: feed.logs.filter((log) => receivedAll(log, startHead, stamped)).length,
      ...commitToClient(feed.logs, stamped),
      syncWallMs,
      benchLoopDelayP99Ms: Math.round(loop.percentile(99) / 1e5) / 10,
      serveRssBytes: rss,
      servePeakRssBytes: serve.peakRssBytes(),
      ...connections,
      cpu,
    };
  } finally {
    for (const close of closers.reverse())
      await Promise.resolve()
        .then(close)
        .catch(() => undefined);
  }
}

/**
 * One round: new records added to the simulator (settled: final at once, so the tail writes them
 * in one transaction and re-reads nothing), `sync` run, every client waited for; answers the
 * round's stamped transactions, each matched with the commit heard for it.
 */
async function writeRound(
  input: {
    setup: IndexerSetup;
    simulator: SimulatorProcess;
    database: ScenarioDatabase;
    recordsPerRound: number;
  },
  state: { probe: pg.Client; clock: CommitClock; feed: FeedClients; syncWallMs: number[]; after: number },
): Promise<StampedTransaction[]> {
  const heard = state.clock.times.length;
  await input.simulator.addRecords(input.recordsPerRound);
  await input.simulator.settleAll();
  state.syncWallMs.push(Math.round(await runTailSync(input.setup, input)));
  const head = await deliveredHead(state.probe, state.feed.logs, 30_000);
  const written = await transactionsBetween(state.probe, state.after, head);
  const commits = state.clock.times.slice(heard);
  // The round's transactions and the commits heard meanwhile, both in commit order (one writer).
  if (commits.length === written.length) {
    for (const [i, t] of written.entries()) t.committedAt = commits[i]!;
  }
  return written;
}

/** One `ledger-indexer sync` of the mirror (a tail); its wall time, ms. */
async function runTailSync(
  setup: IndexerSetup,
  input: { simulator: SimulatorProcess; database: ScenarioDatabase },
): Promise<number> {
  const child = spawnMeasured({
    nodeArgs: [...setup.nodeFlags, ...setup.runner.nodeArgs(['sync', '--base-url', input.simulator.url])],
    env: indexerEnv(setup, { databaseUrl: input.database.url, baseUrl: input.simulator.url }),
    cwd: setup.root,
    label: 'sync-feed-tail',
  });
  const result = await child.exited;
  if (result.code !== 0)
    throw new Error(`sync exited with ${result.code ?? result.signal}: ${lastLine(result.stderrTail)}`);
  return result.wallMs;
}

/**
 * Waits until every transaction is stamped and every client (still streaming) holds the last
 * position; answers that position.
 */
async function deliveredHead(
  probe: pg.Client,
  logs: readonly ClientLog[],
  timeoutMs: number,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await probe.query<{ unstamped: number; head: string | null }>(
      `SELECT count(*) FILTER (WHERE last_position IS NULL)::int AS unstamped, max(last_position)::text AS head
       FROM ledger_feed_transactions`,
    );
    const head = Number(rows[0]?.head ?? 0);
    const failed = logs.find((log) => log.failed !== null);
    if (failed) throw new Error(`a feed client failed: ${failed.failed}`);
    if (rows[0]?.unstamped === 0 && logs.every((log) => log.lastId >= head)) return head;
    if (Date.now() > deadline) {
      const behind = logs.filter((log) => log.lastId < head).length;
      throw new Error(
        `${behind} of ${logs.length} feed clients short of position ${head} after ${timeoutMs} ms`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The transactions stamped after `after` up to `head`, in position order, with their events counted. */
async function transactionsBetween(
  probe: pg.Client,
  after: number,
  head: number,
): Promise<StampedTransaction[]> {
  const { rows } = await probe.query<{ first: string; last: string; events: number }>(
    `SELECT t.first_position::text AS first, t.last_position::text AS last,
       (SELECT count(*)::int FROM ledger_feed_events e WHERE e.xid = t.xid) AS events
     FROM ledger_feed_transactions t
     WHERE t.last_position > $1 AND t.last_position <= $2 ORDER BY t.last_position`,
    [after, head],
  );
  return rows.map((r) => ({
    first: Number(r.first),
    last: Number(r.last),
    events: r.events,
    committedAt: null,
  }));
}

/** Whether `log` holds every event of `stamped` once, in order, and nothing else past `startHead`. */
function receivedAll(log: ClientLog, startHead: number, stamped: readonly StampedTransaction[]): boolean {
  const mine = log.positions.filter((p) => p > startHead);
  const expected = stamped.reduce((sum, t) => sum + t.events, 0);
  if (mine.length !== expected) return false;
  for (let i = 1; i < mine.length; i++) if (mine[i]! <= mine[i - 1]!) return false;
  let at = 0;
  return mine.every((p) => {
    while (at < stamped.length && stamped[at]!.last < p) at += 1;
    return at < stamped.length && stamped[at]!.first <= p;
  });
}

/**
 * Receipt minus commit, ms, for every event a client received of a transaction whose commit was
 * heard; and per such transaction, its first receipt by any client.
 */
function commitToClient(
  logs: readonly ClientLog[],
  stamped: readonly StampedTransaction[],
): Pick<FeedPhaseFigures, 'commitToClientMs' | 'commitToFirstClientMs'> {
  const delays: number[] = [];
  const first = new Map<StampedTransaction, number>();
  for (const log of logs) {
    let at = 0;
    for (let i = 0; i < log.positions.length; i++) {
      const p = log.positions[i]!;
      while (at < stamped.length && stamped[at]!.last < p) at += 1;
      const t = stamped[at];
      if (t === undefined || t.first > p || t.committedAt === null) continue;
      const delay = log.times[i]! - t.committedAt;
      delays.push(delay);
      first.set(t, Math.min(first.get(t) ?? delay, delay));
    }
  }
  return {
    commitToClientMs: latencyFigures(delays),
    commitToFirstClientMs: latencyFigures([...first.values()]),
  };
}

/** Backends of the probe's database other than the bench's own (the probe, the commit clock). */
async function backendsOf(probe: pg.Client): Promise<number[]> {
  const { rows } = await probe.query<{ pid: number }>(
    `SELECT pid FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name <> $1`,
    [COMMIT_CLOCK_NAME],
  );
  return rows.map((r) => r.pid);
}

/**
 * The database's listeners (backends whose last statement was a LISTEN, the bench's commit clock
 * left out) and its connections by application name (the bench's own left out).
 */
async function connectionsOf(
  probe: pg.Client,
): Promise<{ databaseListeners: number; serveConnections: Record<string, number> }> {
  const { rows } = await probe.query<{ name: string; n: number; listening: number }>(
    `SELECT application_name AS name, count(*)::int AS n,
       count(*) FILTER (WHERE query ILIKE 'LISTEN%')::int AS listening
     FROM pg_stat_activity
     WHERE datname = current_database() AND pid <> pg_backend_pid() AND application_name <> $1
       AND backend_type = 'client backend'
     GROUP BY 1 ORDER BY 1`,
    [COMMIT_CLOCK_NAME],
  );
  const serveConnections: Record<string, number> = {};
  for (const r of rows) serveConnections[r.name] = r.n;
  return { databaseListeners: rows.reduce((sum, r) => sum + r.listening, 0), serveConnections };
}
