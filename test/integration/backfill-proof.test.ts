import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { createFetchPage } from '../../src/app/sync-adapters.js';
import { createLedgerClient, type LedgerClient } from '../../src/client/ledger-client.js';
import { queryRows } from '../../src/db/rows.js';
import { createBackfillStore } from '../../src/db/stores/pg-backfill-store.js';
import { createPgStore } from '../../src/db/stores/pg-sync-store.js';
import { recomputeLedgerHash, signedMessage } from '../../src/domain/integrity.js';
import { backfillOwner } from '../../src/domain/lease-owner.js';
import type { LedgerTx } from '../../src/domain/model.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { fetchRange, pageRepairTasks, planBackfill } from '../../src/sync/backfill/page-range.js';
import { checkBackfill } from '../../src/sync/backfill/run-check.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { testAccount } from '../helpers/evm-signer.js';
import { makeLedgerTx } from '../helpers/ledger-tx.js';

const RECORDS = 1000;

describe('a parallel backfill proven complete in PostgreSQL', () => {
  let t: TestDatabase;
  let sim: Simulator;
  let client: LedgerClient;
  before(async () => {
    t = await createTestDatabase();
    // No rawId holes and no arrivals: in-order ranges then join into one proof without repairs.
    sim = createSimulator({ records: RECORDS, seed: 3, holeRate: 0 });
    client = createLedgerClient({ baseUrl: (await sim.listen()).url, requestsPerSecond: 0 });
  });
  after(async () => {
    await client?.close();
    await sim?.close();
    await t?.drop();
  });

  const count = async (query: ReturnType<typeof sql>) =>
    Number((await queryRows<{ n: string }>(t.database.db, query))[0]?.n);

  it('keeps a handful of proven-range rows, not one per page, and counts no page for the watermark', async () => {
    const store = createBackfillStore({ database: t.database });
    const syncStore = createPgStore({ database: t.database });
    const fetchPage = createFetchPage(client);
    const plan = await planBackfill({ store, fetchPage, spec: {}, id: 'b1', pagesPerRange: 10 });
    assert.ok(plan);
    for (const task of plan.tasks) {
      await fetchRange({ store, fetchPage, spec: {}, backfillId: 'b1', task, pagesPerCommit: 1 });
    }
    const rowsBefore = await count(sql`select count(*)::text as n from backfill_proven_ranges`);
    assert.ok(rowsBefore >= RECORDS / 10, `a row per page committed (${rowsBefore})`);
    const proof = await store.provenRanges('txs');

    const outcome = await checkBackfill({
      store,
      syncStore,
      spec: {},
      backfillId: 'b1',
      round: 0,
    });
    assert.deepEqual(outcome, { status: 'done', watermark: RECORDS });

    assert.equal(await count(sql`select count(*)::text as n from backfill_proven_ranges`), proof.length);
    assert.ok(proof.length <= 2, `${proof.length} merged range(s)`);
    assert.deepEqual(await store.provenRanges('txs'), proof);
    // Moving the watermark is not a page of the stream's run.
    assert.equal(await count(sql`select sum(pages)::text as n from sync_runs where stream_key = 'txs'`), 0);
    assert.equal(await count(sql`select watermark::text as n from sync_streams where key = 'txs'`), RECORDS);
  });
});

describe("a parallel backfill's range commits and the stream lease", () => {
  let t: TestDatabase;
  before(async () => {
    t = await createTestDatabase();
  });
  after(async () => {
    await t?.drop();
  });

  it('renew the lease once a third of it has passed, and meanwhile never wait for the stream row', async () => {
    const leaseMs = 60_000;
    const start = new Date('2026-11-25T12:00:00.000Z');
    let clock = start;
    const syncStore = createPgStore({ database: t.database, now: () => clock });
    const store = createBackfillStore({ database: t.database, now: () => clock });
    await syncStore.acquireStream({}, backfillOwner('b2'), leaseMs);
    const expiresAt = async () =>
      (
        await queryRows<{ at: string }>(
          t.database.db,
          sql`select to_json(lease_expires_at)#>>'{}' as at from sync_streams where key = 'txs'`,
        )
      )[0]?.at;
    let page = 0;
    const commit = () => {
      page += 1;
      const record = makeLedgerTx({ rawId: page });
      return store.commitRangePages({
        key: 'txs',
        backfillId: 'b2',
        proven: [{ lo: page, hi: page }],
        pages: [{ page, records: [record], rejected: [] }],
      });
    };

    // Another session holds the stream row (as a range commit renewing the lease would until it
    // ends): a commit 19 s into the lease neither renews it nor waits for that session.
    const holder = new pg.Client({ connectionString: t.url });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query("SELECT 1 FROM sync_streams WHERE key = 'txs' FOR UPDATE");
      clock = new Date(start.getTime() + 19_000);
      const outcome = await Promise.race([
        commit().then(() => 'committed'),
        new Promise((resolve) => setTimeout(resolve, 5_000, 'waited for the stream row')),
      ]);
      assert.equal(outcome, 'committed');
    } finally {
      await holder.query('ROLLBACK');
      await holder.end();
    }
    assert.equal(await expiresAt(), '2026-11-25T12:01:00+00:00', 'not renewed before a third of it passed');

    clock = new Date(start.getTime() + 21_000);
    await commit();
    assert.equal(await expiresAt(), '2026-11-25T12:01:21+00:00', 'renewed once a third of it passed');
  });
});

describe('a range commit in PostgreSQL', () => {
  let t: TestDatabase;
  before(async () => {
    t = await createTestDatabase();
  });
  after(async () => {
    await t?.drop();
  });

  it('writes records, rejected records with the page of each, and the proof in one transaction', async () => {
    const store = createBackfillStore({ database: t.database });
    await store.commitRangePages({
      key: 'txs',
      backfillId: 'b1',
      proven: [{ lo: 100, hi: 100, loPage: 9 }],
      pages: [{ page: 9, records: [makeLedgerTx({ rawId: 100, ledgerHash: '0xtaken' })], rejected: [] }],
    });
    const pages = [
      // Refused while encoding: reported with its own page.
      {
        page: 4,
        records: [makeLedgerTx({ rawId: 43 }), makeLedgerTx({ rawId: 42, amount: '1.5' })],
        rejected: [],
      },
      // Set aside while the page was read.
      {
        page: 5,
        records: [makeLedgerTx({ rawId: 33 })],
        rejected: [{ reason: 'bad', raw: '{"rawId":32}', rawId: 32 }],
      },
      // Its ledgerHash is stored under rawId 100: refused by the statement, with this page.
      {
        page: 6,
        records: [makeLedgerTx({ rawId: 23, ledgerHash: '0xtaken' }), makeLedgerTx({ rawId: 22 })],
        rejected: [],
      },
    ];
    const commitPages = store.commitRangePages;
    assert.ok(commitPages);
    const { sent, result: counts } = await statementsOf(() =>
      commitPages({
        key: 'txs',
        backfillId: 'b1',
        pages,
        proven: [{ lo: 22, hi: 43, loPage: 6 }],
      }),
    );
    // The first write takes the records for new, copies them in and fails on the taken hash,
    // writing nothing; the statement after it looks them up and writes everything.
    assert.deepEqual(writesOf(sent), ['copy', 'statement'], sent.map((s) => s.slice(0, 40)).join(' | '));
    assert.deepEqual(counts, { inserted: 3, updated: 0, unchanged: 0, rejected: 3, conflicts: 0 });
    const rejected = await queryRows<{ raw_id: string; page: number; reason: string }>(
      t.database.db,
      sql`select raw_id::text as raw_id, page, reason from rejected_records r order by r.raw_id`,
    );
    assert.deepEqual(
      rejected.map((r) => [r.raw_id, r.page]),
      [
        ['23', 6],
        ['32', 5],
        ['42', 4],
      ],
    );
    assert.match(rejected[0]?.reason ?? '', /already stored under rawId 100/);
    const stored = await queryRows<{ raw_id: string }>(
      t.database.db,
      sql`select raw_id::text as raw_id from ledger_transactions t order by t.raw_id`,
    );
    assert.deepEqual(
      stored.map((r) => r.raw_id),
      ['22', '33', '43', '100'],
    );
    assert.deepEqual(await store.provenRanges('txs'), [
      { lo: 22, hi: 43, loPage: 6 },
      { lo: 100, hi: 100, loPage: 9 },
    ]);
  });
  it("takes a backfill's records for new unless a batch's rawIds meet stored ones, told by a probe, not a failed copy", async () => {
    const store = createBackfillStore({ database: t.database });
    const commit = (backfillId: string, rawIds: number[]) =>
      statementsOf(() =>
        store.commitRangePages({
          key: 'txs',
          backfillId,
          proven: [{ lo: rawIds[0]!, hi: rawIds.at(-1)! }],
          pages: [
            {
              page: 1,
              records: rawIds.map((rawId) => makeLedgerTx({ rawId, status: 'confirmed', id: '' })),
              rejected: [],
            },
          ],
        }),
      );
    const fresh = await commit('b2', [500, 501, 502]);
    assert.deepEqual(writesOf(fresh.sent), ['copy'], 'new records: copied in');
    assert.equal(fresh.result.inserted, 3);
    // 502 is stored (and its status moves on): the probe finds it, and the batch is written by
    // the statement that looks its records up, with no copy that fails on it first.
    const again = await statementsOf(() =>
      store.commitRangePages({
        key: 'txs',
        backfillId: 'b2',
        proven: [{ lo: 502, hi: 503 }],
        pages: [
          { page: 2, records: [makeLedgerTx({ rawId: 502 }), makeLedgerTx({ rawId: 503 })], rejected: [] },
        ],
      }),
    );
    assert.deepEqual(writesOf(again.sent), ['statement']);
    assert.deepEqual(
      { inserted: again.result.inserted, updated: again.result.updated },
      { inserted: 1, updated: 1 },
    );
    // The next batch meets none: copied in again.
    const next = await commit('b2', [504, 505]);
    assert.deepEqual(writesOf(next.sent), ['copy']);
    // A new rawId whose ledger hash is stored already (a hash twice): the probe finds nothing, the
    // copy fails on the hash's unique index, and the statement written again sets it aside.
    const [{ hash }] = (await queryRows<{ hash: string }>(
      t.database.db,
      sql`select ledger_hash as hash from ledger_transactions where raw_id = 500`,
    )) as [{ hash: string }];
    const twice = await statementsOf(() =>
      store.commitRangePages({
        key: 'txs',
        backfillId: 'b2',
        proven: [{ lo: 510, hi: 510 }],
        pages: [{ page: 3, records: [makeLedgerTx({ rawId: 510, ledgerHash: hash })], rejected: [] }],
      }),
    );
    assert.deepEqual(writesOf(twice.sent), ['copy', 'statement']);
    assert.deepEqual(
      { inserted: twice.result.inserted, rejected: twice.result.rejected },
      { inserted: 0, rejected: 1 },
    );
    const rows = await queryRows<{ n: number; history: number }>(
      t.database.db,
      sql`select (select count(*)::int from ledger_transactions where raw_id >= 500) as n,
                 (select count(*)::int from ledger_tx_status_history where raw_id >= 500) as history`,
    );
    assert.deepEqual(
      rows[0],
      { n: 6, history: 6 },
      "a history row for each record not final when stored and one for 502's change; none for 503, final when stored",
    );
    const queued = await queryRows<{ raw_id: string }>(
      t.database.db,
      sql`select raw_id::text as raw_id from ledger_tx_rechecks order by raw_id`,
    );
    // Not final yet, queued for a re-read; 502 left the queue once served final.
    assert.deepEqual(
      queued.map((r) => r.raw_id),
      ['500', '501', '504', '505'],
    );
  });
});

/**
 * The record writes among statements sent: `copy` for the records copied in (they were taken for
 * new), `statement` for the one statement of a range write.
 */
function writesOf(sent: readonly string[]): Array<'copy' | 'statement'> {
  return sent.flatMap((text): Array<'copy' | 'statement'> => {
    if (text.startsWith('COPY ledger_transactions ')) return ['copy'];
    return /WITH served AS/.test(text) ? ['statement'] : [];
  });
}

/** Runs `fn`, returning what it returns and the text of each statement it sent. */
async function statementsOf<T>(fn: () => Promise<T>): Promise<{ sent: string[]; result: NonNullable<T> }> {
  const sent: string[] = [];
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const config = args[0] as string | { text?: string; name?: string };
    sent.push(typeof config === 'string' ? config : (config.text ?? config.name ?? '?'));
    return (query as (...a: unknown[]) => unknown).apply(this, args);
  } as typeof query;
  try {
    const result = await fn();
    assert.ok(result !== undefined && result !== null);
    return { sent, result };
  } finally {
    pg.Client.prototype.query = query;
  }
}

describe('a range job retried after its last commit was lost in a crash', () => {
  let t: TestDatabase;
  let sim: Simulator;
  let client: LedgerClient;
  before(async () => {
    t = await createTestDatabase();
    sim = createSimulator({ records: 100, seed: 5, holeRate: 0 });
    client = createLedgerClient({ baseUrl: (await sim.listen()).url, requestsPerSecond: 0 });
  });
  after(async () => {
    await client?.close();
    await sim?.close();
    await t?.drop();
  });

  it('proves only what it stored: the check repairs what the lost commit held, and every record ends stored', async () => {
    const store = createBackfillStore({ database: t.database });
    const syncStore = createPgStore({ database: t.database });
    const fetchPage = createFetchPage(client);
    const plan = await planBackfill({ store, fetchPage, spec: {}, id: 'b3', pagesPerRange: 100 });
    assert.ok(plan);
    const [task] = plan.tasks;
    assert.ok(task);
    // The first attempt commits two pages at a time. Its third commit is acknowledged but never
    // becomes durable (an asynchronous commit lost when PostgreSQL crashed), and its fourth fails
    // with the database gone; the progress it saved in the job after the third stays.
    let commits = 0;
    const crashing: typeof store = {
      ...store,
      commitRangePages: async (input) => {
        commits += 1;
        if (commits === 3) return { inserted: 0, updated: 0, unchanged: 0, rejected: 0, conflicts: 0 };
        if (commits === 4) throw new Error('the database went away');
        return store.commitRangePages!(input);
      },
    };
    let resume = task;
    await assert.rejects(
      fetchRange({
        store: crashing,
        fetchPage,
        spec: {},
        backfillId: 'b3',
        task,
        pagesPerCommit: 2,
        commitLingerMs: 60_000,
        onProgress: async (next) => {
          resume = next;
        },
      }),
      /the database went away/,
    );
    assert.equal(resume.fromPage, 7, 'the job resumes after the page of the lost commit');

    // The retry, then checks and repair walks until the run is done.
    await fetchRange({ store, fetchPage, spec: {}, backfillId: 'b3', task: resume, pagesPerCommit: 2 });
    let outcome = await checkBackfill({ store, syncStore, spec: {}, backfillId: 'b3', round: 0 });
    for (let round = 1; outcome.status === 'repair'; round++) {
      for (const repair of await pageRepairTasks(store, outcome))
        await fetchRange({ store, fetchPage, spec: {}, backfillId: 'b3', task: repair });
      outcome = await checkBackfill({ store, syncStore, spec: {}, backfillId: 'b3', round });
    }
    assert.equal(outcome.status, 'done');
    const stored = await queryRows<{ raw_id: string }>(
      t.database.db,
      sql`select raw_id::text as raw_id from ledger_transactions t order by t.raw_id`,
    );
    const missing = [...sim.records()]
      .map((r) => r.rawId)
      .filter((id) => !stored.some((s) => Number(s.raw_id) === id));
    assert.deepEqual(missing, [], 'no record the service listed is missing once the backfill is proven');
  });
});

describe('a range commit that checks signatures', () => {
  let t: TestDatabase;
  before(async () => {
    t = await createTestDatabase();
  });
  after(async () => {
    await t?.drop();
  });

  it('recovers the senders of what it writes when asked to check signatures, as a walk does', async () => {
    const account = testAccount();
    const signed = (rawId: number, overrides: Partial<LedgerTx> = {}): LedgerTx => {
      // Each its own amount: the hash covers the fields, not the rawId.
      const tx = makeLedgerTx({ rawId, from: account.address, amount: String(rawId) });
      const sig = account.sign(signedMessage(tx)!);
      return { ...tx, sig, ledgerHash: recomputeLedgerHash(tx)!, ...overrides };
    };
    const store = createBackfillStore({ database: t.database, checkSignatures: true });
    const counts = await store.commitRangePages({
      key: 'txs',
      backfillId: 'b-sig',
      pages: [{ page: 1, records: [signed(700), signed(701, { amount: '999999' })], rejected: [] }],
      proven: [{ lo: 700, hi: 701 }],
    });
    assert.equal(counts.rejected, 0, JSON.stringify(counts));
    const rows = await queryRows<{ raw_id: string; signature_check: string | null }>(
      t.database.db,
      sql`SELECT raw_id::text, signature_check FROM ledger_transactions WHERE raw_id IN (700, 701) ORDER BY raw_id`,
    );
    assert.deepEqual(rows, [
      { raw_id: '700', signature_check: 'ok' },
      { raw_id: '701', signature_check: 'mismatch' },
    ]);
  });
});
