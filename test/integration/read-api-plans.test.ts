/**
 * The read API's statements on a table big enough for the planner to care: every filter is
 * found through an index, never by reading the whole `ledger_transactions` (EXPLAIN, after
 * ANALYZE, on 60,000 records of 2,000 accounts and a busy one).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { type SQL, sql } from 'drizzle-orm';
import { batchedLookUps, LOOK_UPS_IN_FLIGHT, lookUpsAlone } from '../../src/app/read-api/look-up-batches.js';
import { readOnly } from '../../src/app/read-api/read-transaction.js';
import { accountBalancesSql } from '../../src/db/queries/read-api/account-balances.js';
import type { RecordFilter } from '../../src/db/queries/read-api/list-filter-sql.js';
import { keyPageSql, pageSql } from '../../src/db/queries/read-api/list-records.js';
import { type LookUpBy, lookUpsSql } from '../../src/db/queries/read-api/one-record.js';
import type { RecordRow } from '../../src/db/queries/read-api/record-rows.js';
import { queryRows } from '../../src/db/rows.js';
import { DatabaseError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const RECORDS = 60_000;
const EVM = `0x${'00'.repeat(19)}2a`;
const EVM_CHECKSUM = `0x${'00'.repeat(19)}2A`;

/** A busy account, one record in 50 (1,200 rawIds spread over the table): an id sending, an EVM address receiving. */
const BUSY_ID = 'arweave-busy-account';
const BUSY_EVM = `0x${'00'.repeat(19)}b5`;

let testDb: TestDatabase;

before(async () => {
  testDb = await createTestDatabase();
  const db = testDb.database.db;
  await db.execute(sql`
    INSERT INTO ledger_transactions (raw_id, record_id, token_symbol, action, from_account, to_account, amount,
      fee, fee_recipient, nonce, token_id, chain_type, chain_id, data, version, sig, ledger_hash, status,
      internal_status, internal_status_code, timestamp_ms, ledger_time, target_chain_tx_hash, express_chain_tx_hash,
      express_withdraw_fee, express_refund_ledger_hash, express_err, token_tag, first_seen_at, updated_at)
    SELECT g, 'batch', 'AR', (ARRAY['mint', 'transfer', 'burn', 'bundle'])[1 + g % 4],
      CASE WHEN g % 50 = 3 THEN ${BUSY_ID} ELSE '0x' || lpad(to_hex(g % 1000), 40, '0') END,
      CASE WHEN g % 50 = 3 THEN ${BUSY_EVM} ELSE 'arweave-account-' || (g % 1000) END, g, 1, 'fee-recipient', g, '0',
      'arweave', '0', '', 'v1', 'sig', '0x' || md5(g::text), 'packaged', '{"status":"success"}', 'success',
      1700000000000 + g * 1000, to_timestamp(1700000000 + g), CASE WHEN g % 4 = 1 THEN '0x' || md5('m' || g) ELSE '' END,
      '', '', '', '', 'arweave-ar-' || (g % 5), now(), now()
    FROM generate_series(1, ${RECORDS}::int) g`);
  await db.execute(sql`
    INSERT INTO ledger_bundle_items (raw_id, item_index, tag, chain_id, from_account, to_account, amount)
    SELECT g, 0, 'arweave-ar-0', '0', 'arweave-account-' || (g % 997), '0x' || lpad(to_hex(g % 1000), 40, '0'), 5
    FROM generate_series(4, ${RECORDS}::int, 4) g`);
  // Statistics of every row, not of a sample: with the default target ANALYZE samples 30,000 of
  // the 60,000 records, and one sample in a clean-clone CI made a rare account look common enough
  // for the planner to walk the primary key backwards instead (the plans here would not be the same
  // from one run to the next).
  await db.execute(
    sql.raw(`BEGIN; SET LOCAL default_statistics_target = 1000;
      ANALYZE ledger_transactions; ANALYZE ledger_bundle_items; COMMIT`),
  );
});

after(async () => {
  await testDb?.drop();
});

/** What a plan reads: the tables it scans whole (`Seq Scan`) and the indexes it uses, by name. */
async function planOf(statement: SQL): Promise<{ seqScans: string[]; indexes: string[] }> {
  const [row] = await queryRows<{ plan: unknown }>(
    testDb.database.db,
    sql`EXPLAIN (FORMAT JSON) ${statement}`,
  );
  const raw = (row as Record<string, unknown>)['QUERY PLAN'];
  const plan = typeof raw === 'string' ? JSON.parse(raw) : raw;
  const found: string[] = [];
  const indexes: string[] = [];
  const walk = (node: Record<string, unknown>) => {
    if (node['Node Type'] === 'Seq Scan') found.push(String(node['Relation Name']));
    if (typeof node['Index Name'] === 'string') indexes.push(node['Index Name']);
    for (const child of (node['Plans'] as Array<Record<string, unknown>> | undefined) ?? []) walk(child);
  };
  walk((plan as Array<{ Plan: Record<string, unknown> }>)[0]!.Plan);
  return { seqScans: found, indexes };
}

/**
 * The index entries each index was read for when the statement ran (`EXPLAIN ANALYZE`): the
 * rows its scans gave and those their filters left out, by index name.
 */
async function entriesRead(statement: SQL): Promise<Record<string, number>> {
  const [row] = await queryRows<{ plan: unknown }>(
    testDb.database.db,
    sql`EXPLAIN (ANALYZE, FORMAT JSON) ${statement}`,
  );
  const raw = (row as Record<string, unknown>)['QUERY PLAN'];
  const plan = typeof raw === 'string' ? JSON.parse(raw) : raw;
  const read: Record<string, number> = {};
  const walk = (node: Record<string, unknown>) => {
    const name = node['Index Name'];
    if (typeof name === 'string') {
      const rows = Number(node['Actual Rows']) + Number(node['Rows Removed by Filter'] ?? 0);
      read[name] = (read[name] ?? 0) + rows * Number(node['Actual Loops']);
    }
    for (const child of (node['Plans'] as Array<Record<string, unknown>> | undefined) ?? []) walk(child);
  };
  walk((plan as Array<{ Plan: Record<string, unknown> }>)[0]!.Plan);
  return read;
}

/** The tables a plan reads whole. */
async function seqScans(statement: SQL): Promise<string[]> {
  return (await planOf(statement)).seqScans;
}

const FILTERS: Record<string, RecordFilter> = {
  'an EVM account in another case': { account: EVM_CHECKSUM },
  'an account matched exactly': { account: 'arweave-account-7' },
  'a token tag': { tags: ['arweave-ar-3'] },
  'an action': { action: 'burn' },
  'a time range': { since: '2023-11-14T22:20:00.000Z', until: '2023-11-14T22:30:00.000Z' },
  'an account, a tag and an action': { account: EVM, tags: ['arweave-ar-2'], action: 'transfer' },
};

describe('read API: every filter on an index', () => {
  for (const [name, filter] of Object.entries(FILTERS)) {
    it(`a key page filtered by ${name}`, async () => {
      for (const order of ['asc', 'desc'] as const) {
        assert.deepEqual(await seqScans(keyPageSql(filter, { cursor: 30_000, order, count: 100 })), []);
      }
    });
  }

  for (const name of ['an EVM account in another case', 'an account matched exactly', 'a time range']) {
    it(`a page of a list filtered by ${name}, and its length`, async () => {
      const { count, rows } = pageSql(FILTERS[name]!, 3);
      assert.deepEqual(await seqScans(count), []);
      assert.deepEqual(await seqScans(rows), []);
    });
  }

  it('an EVM account in any case is found through the lower-case account indexes', async () => {
    const filter = FILTERS['an EVM account in another case']!;
    for (const statement of [
      keyPageSql(filter, { cursor: undefined, order: 'desc', count: 10 }),
      pageSql(filter, 1).count,
    ]) {
      const { indexes } = await planOf(statement);
      assert.ok(indexes.includes('ledger_transactions_from_lower_idx'), indexes.join());
      assert.ok(indexes.includes('ledger_transactions_to_lower_idx'), indexes.join());
    }
  });

  it("a busy account's key page is found by its rawIds, not read whole and sorted", async () => {
    // An account's records were once read whole, by bitmaps over both account indexes, and
    // sorted. Its page is read in rawId order: by the account indexes, which hold the rawId after
    // the account, as far as the page goes (its newest page, and a page forward, here); or, where
    // the planner finds it cheaper, by the rawIds past others' records (about 550 entries for a
    // page of 11 at one record in 50; the accounts' indexes without the rawId read that many for
    // every page).
    for (const account of [BUSY_ID, BUSY_EVM.toUpperCase().replace('0X', '0x')]) {
      for (const [order, cursor] of [
        ['asc', 10_000],
        ['desc', undefined],
        ['desc', 30_000],
      ] as const) {
        const read = await entriesRead(keyPageSql({ account }, { cursor, order, count: 10 }));
        const total = Object.values(read).reduce((sum, n) => sum + n, 0);
        assert.ok(total < 1_000, `${account} ${order} from ${cursor}: ${JSON.stringify(read)}`);
        if (cursor === undefined || order === 'asc') {
          // Two walks of 11 at most: the account as sender, then as receiver.
          assert.ok(total <= 22, `${account} ${order} from ${cursor}: ${JSON.stringify(read)}`);
        }
      }
    }
  });

  it('the look-ups by ledger hash and by a mint source-chain hash', async () => {
    assert.deepEqual(await seqScans(lookUpsSql('ledgerHash', [`0x${'AB'.repeat(16)}`, 'another'])), []);
    const mint = await planOf(lookUpsSql('mintChainHash', [`0x${'cd'.repeat(16)}`, 'another']));
    assert.deepEqual(mint, { seqScans: [], indexes: ['ledger_transactions_mint_chain_hash_idx'] });
  });

  it("an account's balances, EVM in another case and exact ids", async () => {
    const evm = await planOf(accountBalancesSql(EVM_CHECKSUM, RECORDS));
    assert.deepEqual(evm.seqScans, []);
    for (const index of [
      'ledger_transactions_fee_recipient_lower_idx',
      'ledger_bundle_items_from_lower_idx',
      'ledger_bundle_items_to_lower_idx',
    ])
      assert.ok(evm.indexes.includes(index), evm.indexes.join());
    assert.deepEqual(await seqScans(accountBalancesSql('arweave-account-7', RECORDS)), []);
  });
});

describe('read API: look-ups gathered', () => {
  it('answers each of many look-ups at once as it would alone, in a few statements', async () => {
    const db = testDb.database.db;
    // Mints with a source-chain hash: twenty transfers that have one become mints.
    await db.execute(
      sql`UPDATE ledger_transactions SET action = 'mint' WHERE raw_id % 4 = 1 AND raw_id < 80`,
    );
    const hashes = await queryRows<{ ledger: string; chain: string }>(
      db,
      sql`SELECT ledger_hash AS ledger, target_chain_tx_hash AS chain FROM ledger_transactions
          WHERE raw_id % 4 = 1 AND raw_id < 200 ORDER BY raw_id`,
    );
    const asked: Array<[LookUpBy, string]> = [];
    for (const [i, { ledger, chain }] of hashes.entries()) {
      asked.push(['ledgerHash', i % 3 === 0 ? ledger.toUpperCase().replace('0X', '0x') : ledger]);
      asked.push(['mintChainHash', i % 2 === 0 ? chain.toUpperCase().replace('0X', '0x') : chain]);
      if (i % 10 === 0) asked.push(['ledgerHash', ledger], ['ledgerHash', `0x${'ab'.repeat(16)}${i}`]);
    }
    // An odd hash, and one PostgreSQL text cannot hold: neither fails the look-ups gathered with it.
    asked.push(['mintChainHash', 'not-a-0x-hash'], ['ledgerHash', 'a "quoted\\ {odd}, hash']);
    asked.push(['ledgerHash', `0x${'ab'.repeat(16)}\u0000`], ['mintChainHash', '\u0000']);
    const alone = lookUpsAlone(db);
    const expected: Array<RecordRow | undefined> = [];
    for (const [by, hash] of asked) expected.push(await alone(by, hash));
    assert.equal(expected.filter((r) => r !== undefined).length, 50 + 20 + 5);

    let statements = 0;
    const counted = new Proxy(db, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== '_') return value;
        const session = new Proxy(value.session, {
          get(s, p, r) {
            const member = Reflect.get(s, p, r);
            if (p !== 'prepareQuery') return member;
            return (...args: unknown[]) => {
              statements++;
              return member.apply(s, args);
            };
          },
        });
        return { ...value, session };
      },
    });
    const gathered = batchedLookUps(counted);
    const answers = await Promise.all(asked.map(([by, hash]) => gathered(by, hash)));
    assert.deepEqual(answers, expected);
    // Each kind: the first look-ups go at once, one a statement in flight; the rest wait and go together.
    assert.ok(
      statements <= 2 * (LOOK_UPS_IN_FLIGHT + 1),
      `${statements} statements for ${asked.length} look-ups`,
    );
  });
});

/** The SQLSTATE of a database failure, translated or not. */
function sqlstateOf(error: unknown): string | undefined {
  if (error instanceof DatabaseError) return error.sqlstate;
  const cause = (error as { cause?: { code?: string } }).cause;
  return cause?.code ?? (error as { code?: string }).code;
}

describe('read API: bounded reads', () => {
  it('reads in a READ ONLY transaction whose statements time out', async () => {
    const settings = await readOnly(testDb.database, async (db) => {
      const [row] = await queryRows<{ read_only: string; timeout: string; isolation: string }>(
        db,
        sql`SELECT current_setting('transaction_read_only') AS read_only, current_setting('statement_timeout') AS timeout,
                   current_setting('transaction_isolation') AS isolation`,
      );
      return row;
    });
    assert.deepEqual(settings, { read_only: 'on', timeout: '3s', isolation: 'repeatable read' });
    await assert.rejects(
      readOnly(testDb.database, (db) => db.execute(sql`DELETE FROM ledger_transactions WHERE raw_id = 1`)),
      (error: unknown) => error instanceof DatabaseError && error.sqlstate === '25006',
    );
    await assert.rejects(
      readOnly(testDb.database, (db) => db.execute(sql`SELECT pg_sleep(5)`)),
      (error: unknown) => sqlstateOf(error) === '57014',
    );
  });
});
