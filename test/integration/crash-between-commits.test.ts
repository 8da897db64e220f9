/**
 * PostgreSQL crashing between two commits of one run, the commit before the crash acknowledged but
 * not yet on disk (page and range commits do not wait for the disk): the pool reconnects without
 * an error, and the run must not carry on from memory past what the database lost. It ends
 * complete or fails with one line, and the next run leaves the mirror equal to the service.
 *
 * Deterministic: a private PostgreSQL whose WAL writer waits 10 s (so an acknowledged
 * asynchronous commit is still in memory), and a proxy in front of the simulator that, before
 * answering a chosen page, waits for the walk's checkpoint to move, then crashes and restarts the
 * server. Each test first checks that the crash really took a commit back.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { createContext } from '../../src/app/context.js';
import { createFetchPage } from '../../src/app/sync-adapters.js';
import { syncOnce } from '../../src/app/sync-once.js';
import { createLedgerClient } from '../../src/client/index.js';
import { loadConfig } from '../../src/config.js';
import { type Database, openDatabase } from '../../src/db/connect.js';
import { queryRows } from '../../src/db/rows.js';
import { migrateDatabase } from '../../src/db/schema/migrate-database.js';
import { createBackfillStore } from '../../src/db/stores/pg-backfill-store.js';
import { createPgStore } from '../../src/db/stores/pg-sync-store.js';
import { DatabaseError } from '../../src/errors.js';
import { silentLogger } from '../../src/logger.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { fetchRange, pageRepairTasks, planBackfill } from '../../src/sync/backfill/page-range.js';
import { checkBackfill } from '../../src/sync/backfill/run-check.js';
import { type PrivatePostgres, startPrivatePostgres } from '../helpers/private-postgres.js';
import { waitFor } from '../helpers/wait-for.js';
import { assertMirrorsTruth } from './sync-truth.js';

let server: PrivatePostgres;

// A crash test that goes wrong fails within these bounds rather than holding CI (a stuck restart).
const TEST_TIMEOUT = { timeout: 180_000 };
const HOOK_TIMEOUT = { timeout: 60_000 };

before(async () => {
  server = await startPrivatePostgres({
    settings: ['wal_writer_delay=10s', 'wal_writer_flush_after=64MB', 'wal_buffers=16MB'],
  });
}, HOOK_TIMEOUT);

after(async () => {
  await server?.destroy();
}, HOOK_TIMEOUT);

/** A fresh database on the private server, migrated. */
async function freshDatabase(name: string): Promise<{ url: string; database: Database }> {
  const admin = await openDatabase({ databaseUrl: server.url, maxConnections: 1 });
  await admin.db.execute(sql.raw(`DROP DATABASE IF EXISTS ${name}`));
  await admin.db.execute(sql.raw(`CREATE DATABASE ${name}`));
  await admin.close();
  const url = server.url.replace(/\/postgres$/, `/${name}`);
  const database = await openDatabase({ databaseUrl: url, maxConnections: 4 });
  await migrateDatabase(database);
  return { url, database };
}

/**
 * A proxy to the simulator that runs `beforePage` before answering each list page (given its
 * page number, or by key its cursor): the test's hook waits there for the commits it wants, and
 * crashes the server.
 */
async function hookedProxy(
  target: string,
  beforePage: (page: number) => Promise<void>,
): Promise<{ url: string; close: () => Promise<void> }> {
  const proxy: Server = createServer((req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', target);
      // A page number, or by key the request's position: the cursor it follows on from.
      const page = url.searchParams.get('page') ?? url.searchParams.get('cursor');
      if (page !== null) await beforePage(Number(page));
      const upstream = await fetch(url);
      res.writeHead(upstream.status, {
        'content-type': upstream.headers.get('content-type') ?? 'application/json',
      });
      res.end(Buffer.from(await upstream.arrayBuffer()));
    })().catch((error: unknown) => {
      res.writeHead(500);
      res.end(String(error));
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  const { port } = proxy.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () => new Promise((resolve) => proxy.close(() => resolve())),
  };
}

/** Waits until the mirror holds at least `n` records. */
async function storedAtLeast(database: Database, n: number): Promise<void> {
  await waitFor(`${n} records stored`, async () => (await storedCount(database)) >= n, {
    timeoutMs: 30_000,
    everyMs: 20,
  });
}

/**
 * Runs `fn` on a database handle of its own, as the next run (a new process) would: the pool of
 * the run the crash crossed may still hold connections the server ended.
 */
async function asNextRun<T>(url: string, fn: (database: Database) => Promise<T>): Promise<T> {
  const database = await openDatabase({ databaseUrl: url, maxConnections: 4 });
  try {
    return await fn(database);
  } finally {
    await database.close();
  }
}

/** How many records the mirror holds (0 while the server is away). */
async function storedCount(database: Database): Promise<number> {
  const rows = await queryRows<{ n: number }>(
    database.db,
    sql`SELECT count(*)::int AS n FROM ledger_transactions`,
  ).catch(() => []);
  return rows[0]?.n ?? 0;
}

/**
 * Crashes the server and starts it again; returns the records stored before and after (counted
 * over a connection of its own: the run's pool may still hold ended ones).
 */
async function crashCounting(url: string, database: Database): Promise<{ before: number; after: number }> {
  const before = await storedCount(database);
  await server.restart('immediate');
  return { before, after: await asNextRun(url, storedCount) };
}

async function runSync(url: string, database: Database, writers: number, env: Record<string, string> = {}) {
  const config = loadConfig({
    ...env,
    LEDGER_BASE_URL: url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LEDGER_RETRY_MIN_MS: '10',
    LEDGER_CONCURRENCY: '1',
    LEDGER_WRITERS: String(writers),
  });
  const ctx = await createContext({
    config,
    logger: silentLogger(),
    database,
    reread: { recheckAfterMs: 0 },
  });
  try {
    return await syncOnce(ctx, { reread: false });
  } finally {
    await ctx.close();
  }
}

describe('a database crash between two commits of a sync', () => {
  let sim: Simulator;
  let simUrl: string;
  before(async () => {
    // Slow pages: a walk with one request in flight commits page after page as they come.
    sim = createSimulator({ records: 400, seed: 83, holeRate: 0, paging: 'page', faults: { latencyMs: 40 } });
    simUrl = (await sim.listen()).url;
  });
  after(async () => {
    await sim?.close();
  });

  for (const writers of [1, 3]) {
    it(
      `never reports up to date with records missing, and the next run repairs (${writers} writer${writers > 1 ? 's' : ''})`,
      TEST_TIMEOUT,
      async () => {
        // A commit that other writes pushed to the disk (a later commit's WAL, a consolidation of
        // several writers' commits) survives the crash: then the scenario is played again.
        for (let attempt = 1; attempt <= 6; attempt++) {
          const outcome = await crashBetweenCommits(`crash_walk_${writers}_${attempt}`, writers);
          if (outcome === 'lost a commit') return;
        }
        assert.fail('the crash never took a commit back in 6 attempts');
      },
    );
  }

  /**
   * Pages 1-14 are made durable (a checkpoint writes the WAL out) before page 15 is answered;
   * page 15's commit is acknowledged, and the crash comes before page 16 is answered, with no
   * commit in flight: page 15's commit is lost, and the commits after it build on it.
   */
  async function crashBetweenCommits(
    name: string,
    writers: number,
  ): Promise<'lost a commit' | 'lost nothing'> {
    const { url, database } = await freshDatabase(name);
    let counts = null as { before: number; after: number } | null;
    // One crash however often page 16 is asked for: a request retried while the server restarts
    // (a slow restart under load) must not restart it a second time mid-run.
    let crash: Promise<{ before: number; after: number }> | null = null;
    const proxy = await hookedProxy(simUrl, async (page) => {
      if (page === 15) {
        await storedAtLeast(database, 140);
        await database.db.execute(sql`CHECKPOINT`);
      } else if (page === 16) {
        crash ??= storedAtLeast(database, 150).then(() => crashCounting(url, database));
        counts = await crash;
      }
    });
    try {
      let firstRun: unknown;
      try {
        const result = await runSync(proxy.url, database, writers);
        firstRun = result.streams[0]?.finished === true ? 'complete' : 'unfinished';
      } catch (error) {
        firstRun = error;
      }
      assert.ok(counts, 'the proxy crashed the server');
      if (counts.after === counts.before) return 'lost nothing';
      if (firstRun === 'complete') {
        // Ending complete is allowed only with everything stored.
        await assertMirrorsTruth(database.db, sim);
      } else {
        assert.ok(
          firstRun instanceof DatabaseError,
          `the run fails with the database's line: ${String(firstRun)}`,
        );
        assert.match(firstRun.message, /no longer in the database|connection|server/);
      }
      await asNextRun(url, async (next) => {
        const second = await runSync(simUrl, next, writers);
        assert.equal(second.streams[0]?.finished, true);
        await assertMirrorsTruth(next.db, sim);
      });
      return 'lost a commit';
    } finally {
      await proxy.close();
      await database.close();
    }
  }
});

describe('a database crash between two commits of a walk by key', () => {
  it('never reports up to date with records missing, and the next run repairs', TEST_TIMEOUT, async () => {
    const sim = createSimulator({
      records: 400,
      seed: 85,
      holeRate: 0,
      paging: 'key',
      faults: { latencyMs: 20 },
    });
    const simUrl = (await sim.listen()).url;
    const byKey = { LEDGER_PAGE_COUNT: '10' };
    try {
      for (let attempt = 1; attempt <= 6; attempt++) {
        const { url, database } = await freshDatabase(`crash_key_${attempt}`);
        // Records 1-140 made durable; the commit of 141-150 acknowledged, then taken back by the crash.
        let counts = null as { before: number; after: number } | null;
        // One crash however often the answer after 150 is asked for (see above).
        let crash: Promise<{ before: number; after: number }> | null = null;
        const proxy = await hookedProxy(simUrl, async (cursor) => {
          if (cursor === 140) {
            await storedAtLeast(database, 140);
            await database.db.execute(sql`CHECKPOINT`);
          } else if (cursor === 150) {
            crash ??= storedAtLeast(database, 150).then(() => crashCounting(url, database));
            counts = await crash;
          }
        });
        try {
          const first = await runSync(proxy.url, database, 1, byKey).then(
            (result) => (result.streams[0]?.finished ? 'complete' : 'unfinished'),
            (error: unknown) => error,
          );
          assert.ok(counts, 'the proxy crashed the server');
          if (counts.after === counts.before) continue;
          if (first === 'complete') await assertMirrorsTruth(database.db, sim);
          else
            assert.ok(
              first instanceof DatabaseError,
              `the run fails with the database's line: ${String(first)}`,
            );
          await asNextRun(url, async (next) => {
            const second = await runSync(simUrl, next, 1, byKey);
            assert.equal(second.streams[0]?.finished, true);
            await assertMirrorsTruth(next.db, sim);
          });
          return;
        } finally {
          await proxy.close();
          await database.close();
        }
      }
      assert.fail('the crash never took a commit back in 6 attempts');
    } finally {
      await sim.close();
    }
  });
});

describe('a database crash between two commits of a range job', () => {
  it(
    'proves only what the database kept: the check repairs the lost commit and the mirror ends equal',
    TEST_TIMEOUT,
    async () => {
      const sim = createSimulator({ records: 300, seed: 84, holeRate: 0 });
      const simUrl = (await sim.listen()).url;
      const { url, database } = await freshDatabase('crash_range');
      const store = createBackfillStore({ database });
      // One page a commit. Pages 1-7 are made durable (a checkpoint writes the WAL out) before page
      // 8 is answered; page 8's commit is acknowledged, and the crash takes it back before page 9 is
      // answered: page 9's commit is the first to build on a commit the database lost.
      let counts = null as { before: number; after: number } | null;
      // One crash however often page 9 is asked for (see above): a second request while the
      // first waited restarted the server again, under the check that came next.
      let crash: Promise<{ before: number; after: number }> | null = null;
      const proxy = await hookedProxy(simUrl, async (page) => {
        if (page === 8) {
          await storedAtLeast(database, 70);
          await database.db.execute(sql`CHECKPOINT`);
        } else if (page === 9) {
          crash ??= storedAtLeast(database, 80).then(() => crashCounting(url, database));
          counts = await crash;
        }
      });
      const client = createLedgerClient({ baseUrl: proxy.url, requestsPerSecond: 0, retryMinMs: 10 });
      const fetchPage = createFetchPage(client);
      try {
        const plan = await planBackfill({ store, fetchPage, spec: {}, id: 'crash', pagesPerRange: 100 });
        assert.ok(plan);
        const [task] = plan.tasks;
        assert.ok(task);
        await fetchRange({
          store,
          fetchPage,
          spec: {},
          backfillId: 'crash',
          task,
          pagesPerCommit: 1,
          commitLingerMs: 0,
        }).catch(() => undefined);
        assert.ok(counts, 'the proxy crashed the server');
        const { before, after } = counts;
        assert.equal(
          before - after,
          10,
          `the crash took page 8's commit back (${before} stored, ${after} kept)`,
        );
        // The check and its repairs, as the next jobs (new connections) run them.
        await asNextRun(url, async (next) => {
          const nextStore = createBackfillStore({ database: next });
          const nextSync = createPgStore({ database: next });
          const check = (round: number) =>
            checkBackfill({ store: nextStore, syncStore: nextSync, spec: {}, backfillId: 'crash', round });
          let outcome = await check(0);
          for (let round = 1; outcome.status === 'repair' && round < 6; round++) {
            for (const repair of await pageRepairTasks(nextStore, outcome))
              await fetchRange({ store: nextStore, fetchPage, spec: {}, backfillId: 'crash', task: repair });
            outcome = await check(round);
          }
          assert.equal(outcome.status, 'done');
          await assertMirrorsTruth(next.db, sim);
        });
      } finally {
        await client.close();
        await proxy.close();
        await database.close();
        await sim.close();
      }
    },
  );
});
