import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { createContext } from '../../src/app/context.js';
import { type SyncOptions, syncOnce } from '../../src/app/sync-once.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/connect.js';
import { queryOne } from '../../src/db/rows.js';
import { silentLogger } from '../../src/logger.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { assertMirrorsTruth, wellFormedTruth } from './sync-truth.js';

const databases: TestDatabase[] = [];
const simulators: Simulator[] = [];

async function setup(options: Parameters<typeof createSimulator>[0]) {
  const simulator = createSimulator(options);
  simulators.push(simulator);
  const { url } = await simulator.listen();
  const testDb = await createTestDatabase();
  databases.push(testDb);
  return { simulator, url, database: testDb.database };
}

/** One in-process sync, as the `sync` command runs it; re-reads are due at once. */
async function sync(url: string, database: Database, options: SyncOptions = {}) {
  const config = loadConfig({
    LEDGER_BASE_URL: url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LEDGER_RETRY_MIN_MS: '10',
    LEDGER_CONCURRENCY: '8',
  });
  const ctx = await createContext({
    config,
    logger: silentLogger(),
    database,
    reread: { recheckAfterMs: 0 },
  });
  try {
    return await syncOnce(ctx, options);
  } finally {
    await ctx.close();
  }
}

const count = async (database: Database, query: ReturnType<typeof sql>) =>
  Number((await queryOne<{ n: string }>(database.db, query)).n);

after(async () => {
  for (const simulator of simulators) await simulator.close();
  for (const db of databases) await db.drop();
});

describe('sync into PostgreSQL', () => {
  it('mirrors the whole service field by field after a backfill, 78-digit amounts exact', async () => {
    const { simulator, url, database } = await setup({ records: 2500, seed: 4 });
    const result = await sync(url, database);
    assert.equal(result.streams[0]?.mode, 'backfill');
    assert.equal(result.streams[0]?.finished, true);
    await assertMirrorsTruth(database.db, simulator);
    const longest = wellFormedTruth(simulator).reduce((max, r) => Math.max(max, r.amount.length), 0);
    assert.ok(longest >= 70, `the data set holds amounts of ${longest} digits`);
    const stored = await count(
      database,
      sql`SELECT max(length(amount::text))::text AS n FROM ledger_transactions`,
    );
    assert.equal(stored, longest);
    assert.equal((await count(database, sql`SELECT count(*)::text AS n FROM ledger_tokens`)) > 0, true);
  });

  it('stores a 78-digit amount (2^256 - 1) exactly', async () => {
    const { url: simulatorUrl, database } = await setup({ records: 3, seed: 1 });
    const page = (await (await fetch(`${simulatorUrl}/txs?page=1`)).json()) as {
      txs: Array<Record<string, unknown>>;
    };
    const huge = (2n ** 256n - 1n).toString();
    page.txs[0]!['amount'] = huge;
    page.txs[0]!['fee'] = `9${'0'.repeat(77)}`;
    const info = await (await fetch(`${simulatorUrl}/info`)).text();
    const server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      res.setHeader('content-type', 'application/json');
      if (path === '/info') res.end(info);
      else if (path === '/txs') res.end(JSON.stringify({ ...page, currentPage: 1, totalPages: 1 }));
      else {
        res.statusCode = 404;
        res.end('{"error":"err_not_found"}');
      }
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      await sync(`http://127.0.0.1:${port}`, database);
      const row = await queryOne<{ amount: string; fee: string }>(
        database.db,
        sql`SELECT amount::text AS amount, fee::text AS fee FROM ledger_transactions WHERE raw_id = ${page.txs[0]!['rawId'] as number}`,
      );
      assert.deepEqual(row, { amount: huge, fee: `9${'0'.repeat(77)}` });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });

  it('mirrors records that arrive during the backfill once a tail sync follows, status changes kept', async () => {
    const { simulator, url, database } = await setup({
      records: 2000,
      seed: 8,
      arrivalsPerSecond: 300,
      packageDelayMs: 300,
      faults: { latencyMs: 3 },
    });
    const first = await sync(url, database);
    assert.equal(first.streams[0]?.mode, 'backfill');
    simulator.pauseArrivals();
    simulator.settleAll();
    const second = await sync(url, database);
    assert.equal(second.streams[0]?.mode, 'tail');
    assert.ok((second.streams[0]?.counts.inserted ?? 0) > 0, 'the tail picked up new records');
    await assertMirrorsTruth(database.db, simulator);
    const changed = await count(
      database,
      sql`SELECT count(DISTINCT h.raw_id)::text AS n FROM ledger_tx_status_history h
          JOIN ledger_tx_status_history p ON p.raw_id = h.raw_id AND p.status = 'packaged'
          WHERE h.status = 'confirmed'`,
    );
    assert.ok(changed > 0, 'confirmed → packaged changes are in the history');
  });

  it('writes no row when the service has not changed', async () => {
    const { url, database } = await setup({ records: 800, seed: 9 });
    await sync(url, database);
    const before = await queryOne<{ updated: string; history: string }>(
      database.db,
      sql`SELECT max(updated_at)::text AS updated,
            (SELECT count(*) FROM ledger_tx_status_history)::text AS history FROM ledger_transactions`,
    );
    const again = await sync(url, database);
    assert.equal(again.streams[0]?.counts.inserted, 0);
    assert.equal(again.streams[0]?.counts.updated, 0);
    const afterwards = await queryOne<{ updated: string; history: string }>(
      database.db,
      sql`SELECT max(updated_at)::text AS updated,
            (SELECT count(*) FROM ledger_tx_status_history)::text AS history FROM ledger_transactions`,
    );
    assert.deepEqual(afterwards, before);
  });

  it('sets malformed records aside with their reason and stores the rest', async () => {
    const { simulator, url, database } = await setup({
      records: 1500,
      seed: 10,
      faults: { malformedRate: 0.03 },
    });
    const result = await sync(url, database);
    const malformed = [...simulator.records()].filter((r) => r.malformed !== undefined);
    assert.ok(malformed.length > 10, `${malformed.length} malformed records served`);
    await assertMirrorsTruth(database.db, simulator);
    const rejected = await count(database, sql`SELECT count(*)::text AS n FROM rejected_records`);
    assert.equal(rejected, malformed.length);
    assert.equal(result.streams[0]?.counts.rejected, malformed.length);
    const described = await count(
      database,
      sql`SELECT count(*)::text AS n FROM rejected_records
          WHERE reason <> '' AND raw_text <> '' AND stream_key = 'txs' AND page >= 1`,
    );
    assert.equal(described, malformed.length, 'each carries its reason, raw text, stream and page');
  });

  it('follows one account with a filter in its own stream', async () => {
    const { simulator, url, database } = await setup({ records: 1500, seed: 11 });
    const truth = [...simulator.records()];
    const counts = new Map<string, number>();
    for (const r of truth) counts.set(r.from, (counts.get(r.from) ?? 0) + 1);
    const [account] = [...counts.entries()].sort((a, b) => b[1] - a[1])[0]!;
    const result = await sync(url, database, { accounts: [account], withoutAction: 'mint' });
    assert.ok(result.streams[0]?.key.startsWith('txsByAccount/'));
    const stored = await count(database, sql`SELECT count(*)::text AS n FROM ledger_transactions`);
    const expected = truth.filter(
      (r) =>
        (r.from.toLowerCase() === account.toLowerCase() || r.to.toLowerCase() === account.toLowerCase()) &&
        r.action !== 'mint',
    ).length;
    assert.ok(stored > 0 && stored <= expected + 5, `stored ${stored} of the account's ${expected}`);
    const foreign = await count(
      database,
      sql`SELECT count(*)::text AS n FROM ledger_transactions WHERE action = 'mint'`,
    );
    assert.equal(foreign, 0);
  });
});
