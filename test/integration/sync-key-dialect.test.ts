/**
 * `sync` against servers that speak the deployed key dialect, the interface document's page
 * numbers, or both: auto picks the dialect in one request, a key-only server is mirrored a
 * hundred records a request, and what deployments do (a silent cap, a refused count, lists on a
 * second host, accounts by `address=`, records shown late) ends with the mirror equal.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { createContext } from '../../src/app/context.js';
import { syncOnce } from '../../src/app/sync-once.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/connect.js';
import { queryRows } from '../../src/db/rows.js';
import { findGaps } from '../../src/domain/raw-id-ranges.js';
import { silentLogger } from '../../src/logger.js';
import { createSimulator, type Simulator, type SimulatorOptions } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startHttpServer } from '../helpers/http-server.js';
import { forward } from '../helpers/proxy.js';
import { assertMirrorsTruth } from './sync-truth.js';

const databases: TestDatabase[] = [];
const simulators: Simulator[] = [];
after(async () => {
  for (const sim of simulators) await sim.close();
  for (const db of databases) await db.drop();
});

async function setup(options: SimulatorOptions) {
  const sim = createSimulator({ packageDelayMs: 0, burnTargetDelayMs: 0, ...options });
  simulators.push(sim);
  const { url } = await sim.listen();
  const t = await createTestDatabase();
  databases.push(t);
  return { sim, url, database: t.database };
}

async function sync(
  database: Database,
  env: Record<string, string>,
  options: Parameters<typeof syncOnce>[1] = {},
) {
  const config = loadConfig({ LEDGER_REQUESTS_PER_SECOND: '0', LEDGER_RETRY_MIN_MS: '10', ...env });
  const ctx = await createContext({
    config,
    logger: silentLogger(),
    database,
    reread: { recheckAfterMs: 0 },
  });
  try {
    const result = await syncOnce(ctx, options);
    return { result, stats: ctx.client.stats() };
  } finally {
    await ctx.close();
  }
}

/** A first sync stopped (by its signal) after twelve answers: a backfill in lanes left midway. */
async function stoppedSync(database: Database, env: Record<string, string>) {
  const stop = new AbortController();
  let answers = 0;
  const first = await sync(database, env, {
    signal: stop.signal,
    onPage: (event) => {
      answers += event.pages;
      if (answers >= 12) stop.abort(new Error('test stop'));
    },
  });
  assert.equal(first.result.stopped, true);
  return first;
}

describe('sync by key, the deployed dialect', () => {
  it('mirrors a key-only server a hundred records a request, picked by auto in one request', async () => {
    const { sim, url, database } = await setup({ records: 2000, seed: 41, paging: 'key' });
    const { result, stats } = await sync(database, { LEDGER_BASE_URL: url });
    const walk = result.streams[0];
    assert.equal(walk?.dialect, 'key');
    assert.equal(walk?.finished, true);
    await assertMirrorsTruth(database.db, sim);
    const requests = sim.listRequests();
    assert.equal(requests.pageRequests, 0, 'never a page number');
    // 20 answers of a hundred, the empty check of the end, and the one request that asked; and
    // where a range gave its upper half to an idle lane, at most one short answer below the cut
    // (holes move the answers off it), at most two here.
    assert.ok(requests.keyRequests <= 25, `${requests.keyRequests} key requests for 2000 records`);
    assert.ok(stats.keyRequests >= 21);
  });

  it('backfills a long list in lanes of rawId ranges; a run stopped midway is completed from its proofs', async () => {
    const { sim, url, database } = await setup({ records: 6000, seed: 54, paging: 'key', holeRate: 0 });
    await stoppedSync(database, { LEDGER_BASE_URL: url, LEDGER_WRITERS: '3' });
    const [run] = await queryRows<{ status: string; head: string }>(
      database.db,
      sql`SELECT status, head_raw_id::text AS head FROM backfill_runs`,
    );
    assert.equal(run?.status, 'running', 'the stopped run is kept');
    const proven = await queryRows<{ lo: string; hi: string }>(
      database.db,
      sql`SELECT lo::text AS lo, hi::text AS hi FROM backfill_proven_ranges ORDER BY lo`,
    );
    // Three lanes began at once: proofs start at the bottom and at range boundaries above it.
    assert.ok(
      proven.some((r) => Number(r.lo) === 0) && proven.some((r) => Number(r.lo) > 0),
      JSON.stringify(proven),
    );
    // What the stopped run left unproven: a hundred rawIds an answer (no holes), and where a
    // stretch ends, one short answer more.
    const gaps = findGaps(
      proven.map((r) => ({ lo: Number(r.lo), hi: Number(r.hi) })),
      { lo: 0, hi: Number(run?.head) },
    );
    const unread = gaps.reduce((n, gap) => n + Math.ceil((gap.hi - gap.lo + 1) / 100) + 1, 0);
    const before = sim.listRequests().keyRequests;
    const second = await sync(database, { LEDGER_BASE_URL: url, LEDGER_WRITERS: '3' });
    assert.equal(second.result.streams[0]?.finished, true);
    await assertMirrorsTruth(database.db, sim);
    const [done] = await queryRows<{ status: string }>(database.db, sql`SELECT status FROM backfill_runs`);
    assert.equal(done?.status, 'done');
    // What the first run proved is not read again: the next run reads what it left, plus the
    // detection, the head and the tail. (Requests in flight at the stop are lost with it.)
    const again = sim.listRequests().keyRequests - before;
    assert.ok(
      again <= unread + 3,
      `${again} key requests after the stop, for ${gaps.length} stretches left unproven (${unread} answers)`,
    );
  });

  it('ends a first backfill in lanes a stopped run left when the next run is --full: its run done, its indexes built', async () => {
    const { sim, url, database } = await setup({ records: 6000, seed: 55, paging: 'key', holeRate: 0 });
    const env = { LEDGER_BASE_URL: url, LEDGER_WRITERS: '3' };
    await stoppedSync(database, env);
    const deferred = async () =>
      (await queryRows<{ n: number }>(database.db, sql`SELECT count(*)::int AS n FROM deferred_indexes`))[0]
        ?.n;
    assert.ok(((await deferred()) ?? 0) > 0, 'the stopped backfill left its indexes deferred');
    const before = sim.listRequests().keyRequests;
    const second = await sync(database, env, { full: true });
    assert.equal(second.result.streams[0]?.finished, true);
    await assertMirrorsTruth(database.db, sim);
    const runs = await queryRows<{ status: string }>(database.db, sql`SELECT status FROM backfill_runs`);
    assert.deepEqual(
      runs.map((r) => r.status),
      ['done'],
      'the run the stopped sync left is done, never left running',
    );
    assert.equal(await deferred(), 0, 'the read-side indexes are built');
    // The lanes took over from the stopped run's proofs, and no walk read them all again.
    const requests = sim.listRequests().keyRequests - before;
    assert.ok(requests <= 60, `${requests} key requests for the 6000 records left by ${before}`);
  });

  it('ends a first backfill in lanes a stopped run left when the next run reads the stream by page number', async () => {
    const { sim, url, database } = await setup({ records: 6000, seed: 56, paging: 'both', holeRate: 0 });
    await stoppedSync(database, { LEDGER_BASE_URL: url, LEDGER_WRITERS: '3', LEDGER_PAGING: 'key' });
    const second = await sync(database, { LEDGER_BASE_URL: url, LEDGER_PAGING: 'page' });
    assert.equal(second.result.streams[0]?.dialect, 'page');
    assert.equal(second.result.streams[0]?.finished, true);
    await assertMirrorsTruth(database.db, sim);
    const runs = await queryRows<{ status: string; finished: boolean }>(
      database.db,
      sql`SELECT status, finished_at IS NOT NULL AS finished FROM backfill_runs`,
    );
    assert.deepEqual(runs, [{ status: 'done', finished: true }], 'the run left open is done with the walk');
    const [deferred] = await queryRows<{ n: number }>(
      database.db,
      sql`SELECT count(*)::int AS n FROM deferred_indexes`,
    );
    assert.equal(deferred?.n, 0, 'the read-side indexes are built');
  });

  it('reads a page-only server by page number, and a server of both by key', async () => {
    const pageOnly = await setup({ records: 300, seed: 42, paging: 'page' });
    const onPages = await sync(pageOnly.database, { LEDGER_BASE_URL: pageOnly.url });
    assert.equal(onPages.result.streams[0]?.dialect ?? 'page', 'page');
    await assertMirrorsTruth(pageOnly.database.db, pageOnly.sim);
    const both = await setup({ records: 300, seed: 43, paging: 'both' });
    const onKeys = await sync(both.database, { LEDGER_BASE_URL: both.url });
    assert.equal(onKeys.result.streams[0]?.dialect, 'key');
    await assertMirrorsTruth(both.database.db, both.sim);
    const forced = await setup({ records: 300, seed: 44, paging: 'both' });
    const byPage = await sync(forced.database, { LEDGER_BASE_URL: forced.url, LEDGER_PAGING: 'page' });
    assert.equal(byPage.result.streams[0]?.dialect ?? 'page', 'page');
    assert.equal(forced.sim.listRequests().keyRequests, 0);
  });

  it('follows a silent cap, and settles on the count a server accepts', async () => {
    const capped = await setup({ records: 700, seed: 45, paging: 'key', maxCount: 30 });
    await sync(capped.database, { LEDGER_BASE_URL: capped.url });
    await assertMirrorsTruth(capped.database.db, capped.sim);
    const refusing = await setup({ records: 700, seed: 46, paging: 'key', refuseCountAbove: 50 });
    await sync(refusing.database, { LEDGER_BASE_URL: refusing.url });
    await assertMirrorsTruth(refusing.database.db, refusing.sim);
    assert.ok(refusing.sim.listRequests().keyRequests <= 20, 'fifty a request once refused a hundred');
  });

  it('tails by key, new records and records shown late alike, and keeps an account list by address=', async () => {
    const { sim, url, database } = await setup({
      records: 500,
      seed: 47,
      paging: 'key',
      arrivalsPerSecond: 100,
      lateRate: 0.2,
      lateMs: 800,
    });
    for (let run = 0; run < 4; run++) {
      await sync(database, { LEDGER_BASE_URL: url });
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    sim.pauseArrivals();
    await new Promise((resolve) => setTimeout(resolve, 1200));
    await sync(database, { LEDGER_BASE_URL: url });
    await assertMirrorsTruth(database.db, sim);
  });

  it('re-reads records that change after first sight by key, a hundred an answer, until they end equal', async () => {
    // Records are confirmed at first sight and packaged two seconds later; no rawId holes, so the
    // next tail has no span to read again, and the re-reads are what brings them current.
    const { sim, url, database } = await setup({
      records: 300,
      seed: 49,
      paging: 'key',
      holeRate: 0,
      arrivalsPerSecond: 150,
      packageDelayMs: 2000,
      burnTargetDelayMs: 2000,
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    sim.pauseArrivals();
    await sync(database, { LEDGER_BASE_URL: url });
    // Every record changes now (packaged, burns' hashes landed): none changes while the next
    // sync reads, so its end state is the service's.
    sim.settleAll();
    const before = sim.listRequests().keyRequests;
    const { result } = await sync(database, { LEDGER_BASE_URL: url });
    // The tail begins at the head: its one answer brings the newest hundred current, and the
    // re-read after it the records below, a hundred an answer.
    const tail = result.streams[0];
    const reread = result.reread;
    assert.ok(tail && reread, 'walked and re-read');
    assert.ok(tail.counts.updated >= 90, `the tail's answer brought ${tail.counts.updated} records current`);
    const updated = tail.counts.updated + reread.counts.updated;
    assert.ok(updated >= 140, `records brought current: ${JSON.stringify({ tail: tail.counts, reread })}`);
    assert.ok(reread.viaPages >= reread.checked / 2, 'most through key answers');
    const requests = sim.listRequests().keyRequests - before;
    assert.ok(requests * 40 < updated, `${requests} requests for ${updated} records`);
    await assertMirrorsTruth(database.db, sim);
  });

  it('keeps the dialect the service answered with, and asks again after an answer of the wrong shape', async () => {
    const { sim, url, database } = await setup({ records: 300, seed: 50, paging: 'both', holeRate: 0 });
    // In front of the simulator: once `pageOnly`, the key parameters are dropped, so the service
    // answers in page numbers, as a deployment that changed dialect would.
    let pageOnly = false;
    const front = createServer((req, res) => {
      const target = new URL(req.url ?? '/', url);
      if (pageOnly) for (const name of ['cursor', 'order', 'count']) target.searchParams.delete(name);
      void fetch(target).then(async (answer) => {
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(await answer.text());
      });
    });
    await new Promise<void>((resolve) => front.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(front.address() as AddressInfo).port}`;
      const env = { LEDGER_BASE_URL: base, LEDGER_RETRIES: '1' };
      await sync(database, env);
      const before = sim.listRequests().keyRequests;
      const second = await sync(database, env);
      assert.equal(second.result.streams[0]?.dialect, 'key');
      assert.equal(
        sim.listRequests().keyRequests - before,
        1,
        'the tail alone: the dialect was kept, not asked',
      );
      pageOnly = true;
      sim.addRecords(5);
      await assert.rejects(sync(database, env), /malformed|shape|hasNextPage|txs/i);
      const third = await sync(database, env);
      assert.equal(
        third.result.streams[0]?.dialect ?? 'page',
        'page',
        'asked again, and read by page number',
      );
      await assertMirrorsTruth(database.db, sim);
    } finally {
      await new Promise((resolve) => front.close(resolve));
    }
  });

  it('mirrors an account from a server that ignores address=, through /txs/{account}', async () => {
    const { url, database } = await setup({ records: 600, seed: 49, paging: 'key', arrivalsPerSecond: 0 });
    const records = (await (await fetch(`${url}/_sim/records`)).text())
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { rawId: number; from: string; to: string });
    const counts = new Map<string, number>();
    for (const r of records) counts.set(r.from, (counts.get(r.from) ?? 0) + 1);
    const account = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
    const own = records.filter((r) => r.from === account || r.to === account).map((r) => r.rawId);
    // The global list whatever address= asks; the account's own list at /txs/{account}.
    const asked: string[] = [];
    const server = createServer((req, res) => {
      const target = new URL(req.url ?? '/', url);
      asked.push(target.pathname + target.search);
      target.searchParams.delete('address');
      void fetch(target).then(async (answer) => {
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(await answer.text());
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      await sync(database, { LEDGER_BASE_URL: base }, { accounts: [account] });
      const stored = await queryRows<{ raw_id: number }>(
        database.db,
        sql`SELECT raw_id::int FROM ledger_transactions ORDER BY raw_id`,
      );
      assert.ok(own.length > 0 && own.length < records.length / 2, `${own.length} of ${records.length}`);
      assert.deepEqual(
        stored.map((r) => r.raw_id),
        own.sort((a, b) => a - b),
      );
      assert.ok(
        asked.some((path) => path.startsWith(`/txs/${encodeURIComponent(account)}`)),
        'the account path asked',
      );
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('reads the lists from a second host, and /info from the service', async () => {
    const { sim, url, database } = await setup({ records: 400, seed: 48, paging: 'key' });
    // The main host answers /info and refuses lists, as a host whose lists moved away would.
    const seen: string[] = [];
    const main = createServer((req, res) => {
      seen.push(req.url ?? '');
      if ((req.url ?? '').startsWith('/txs')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        res.end('{"error":"err_not_found"}');
        return;
      }
      void fetch(new URL(req.url ?? '/', url)).then(async (answer) => {
        res.writeHead(answer.status, { 'content-type': 'application/json' });
        res.end(await answer.text());
      });
    });
    await new Promise<void>((resolve) => main.listen(0, '127.0.0.1', resolve));
    try {
      const base = `http://127.0.0.1:${(main.address() as AddressInfo).port}`;
      await sync(database, { LEDGER_BASE_URL: base, LEDGER_LIST_URL: url, LEDGER_LOOKUPS: 'deployed' });
      await assertMirrorsTruth(database.db, sim);
      assert.ok(seen.includes('/info'), 'tokens from the main host');
      assert.ok(!seen.some((path) => path.startsWith('/txs')), 'no list asked of the main host');
    } finally {
      await new Promise((resolve) => main.close(resolve));
    }
  });

  it('asks for the tokens and the dialect at once on a first run: one wait for both answers', async () => {
    const { sim, url, database } = await setup({ records: 50, seed: 7, paging: 'key' });
    // Every answer 100 ms away; the first held until a second request arrives (at most 3 s): a
    // command that waits for one answer before asking the other sends its second after that.
    let secondArrived = (): void => {};
    const second = new Promise<void>((resolve) => {
      secondArrived = resolve;
    });
    let firstAnsweredAt = Number.POSITIVE_INFINITY;
    const proxy = await startHttpServer(async (request, index) => {
      if (index === 1) secondArrived();
      await new Promise((resolve) => setTimeout(resolve, 100));
      if (index === 0) {
        await Promise.race([second, new Promise((resolve) => setTimeout(resolve, 3000))]);
        firstAnsweredAt = performance.now();
      }
      return forward(url, request);
    });
    try {
      await sync(database, { LEDGER_BASE_URL: proxy.baseUrl, LEDGER_PAGING: 'auto' });
      const paths = proxy.requests.map((r) => (r.path === '/info' ? 'info' : 'list'));
      assert.deepEqual(
        paths.slice(0, 2).sort(),
        ['info', 'list'],
        'the first two requests: /info and the probe',
      );
      assert.ok(
        (proxy.requests[1]?.at ?? Number.POSITIVE_INFINITY) < firstAnsweredAt,
        'the second sent before the first was answered',
      );
      await assertMirrorsTruth(database.db, sim);
    } finally {
      await proxy.close();
    }
  });
});
