/**
 * A backfill's range write by COPY against the same write by one statement: for the same records
 * (awkward text in every kind of column, bundles, records not final, a tag matched to
 * `ledger_tokens` case-insensitively, rejected records, a proof), every table ends the same, byte
 * for byte. And a copy that meets a stored record writes nothing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import type { Database } from '../../src/db/connect.js';
import { queryRows } from '../../src/db/rows.js';
import { prepareBatch } from '../../src/db/write/prepare-batch.js';
import { copyRangeWrite } from '../../src/db/write/range-copy.js';
import { buildRangeWrite } from '../../src/db/write/range-write-sql.js';
import { DEFAULT_REREAD_POLICY } from '../../src/db/write/reread-queue.js';
import { writeTransactions } from '../../src/db/write/write-transactions.js';
import type { LedgerTx } from '../../src/domain/model.js';
import { DatabaseError } from '../../src/errors.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { makeLedgerTx } from '../helpers/ledger-tx.js';

/** Text that COPY's format or the JSON rows could get wrong. */
const AWKWARD = [
  'tab\there',
  'new\nline and carriage\rreturn',
  'back\\slash \\N \\t \\. and \\',
  '\\N',
  '\\.',
  '\x1e',
  'record \x1e separator \x1f unit separator',
  '{"a" : 1,  "b":[ ], "a":"dup"}',
  'quote " and \' both',
  'NULL',
  'null',
  '',
  ' héllo 🚀 \u00e9\u0301 ',
  '\\u0041 stays six characters',
  '12.50',
];

function awkwardRecords(): LedgerTx[] {
  const records = AWKWARD.map((text, i) =>
    makeLedgerTx({
      rawId: 100 + i,
      id: text,
      from: text,
      to: `${text}-to`,
      tokenSymbol: i % 2 === 0 ? 'usdc' : text,
      data: text,
      sig: text,
      version: text,
      targetChainTxHash: text,
      // Not final: queued for a re-read.
      status: i % 3 === 0 ? 'confirmed' : 'packaged',
      internalStatus: JSON.stringify({ status: text, note: text }),
      internalStatusParsed: { status: text, json: { status: text, note: text } },
      express: { chainTxHash: text, withdrawFee: text, refundLedgerHash: text, err: text },
    }),
  );
  const items = AWKWARD.map((text, i) => ({
    tag: `${text}-tag`,
    chainID: text,
    from: text,
    to: `${text}-to`,
    amount: String(1000 + i),
  }));
  records.push(
    makeLedgerTx({
      rawId: 200,
      action: 'bundle',
      data: JSON.stringify({ bundle: { items } }),
      // Its tag matches a `ledger_tokens` tag only case-insensitively.
      tokenID: '0xAAAA',
    }),
    makeLedgerTx({ rawId: 201, internalStatus: 'plain text', internalStatusParsed: undefined }),
  );
  return records;
}

const NOW = new Date('2026-11-26T12:00:00.123Z');

function inputs() {
  const txs = awkwardRecords();
  const prepared = prepareBatch(txs, {
    now: NOW,
    burnWindowMs: DEFAULT_REREAD_POLICY.burnWindowMs,
    pages: txs.map((_, i) => 1 + Math.floor(i / 5)),
  });
  assert.equal(prepared.records.length, txs.length, 'every record encodes');
  assert.equal(prepared.divergent.length, 0);
  const rest = {
    now: NOW,
    policy: DEFAULT_REREAD_POLICY,
    range: {
      streamKey: 'txs',
      backfillId: 'b1',
      owner: 'backfill:b1',
      rejected: [
        {
          reason: 'tab\tand \\ in a reason',
          rawText: '{"rawId":99}',
          rawId: 99,
          ledgerHash: null,
          page: 4,
          seenCount: 1,
        },
      ],
      proven: [{ lo: 100, hi: 201, loPage: 1 }],
      openGap: null,
    },
  };
  return { prepared, rest };
}

/** Every table a range write touches, as JSON text a row, in a fixed order. */
async function tables(database: Database): Promise<Record<string, string[]>> {
  const read = async (table: string, order: string) =>
    (
      await queryRows<{ row: string }>(
        database.db,
        sql.raw(`SELECT row_to_json(t)::text AS row FROM ${table} t ORDER BY ${order}`),
      )
    ).map((r) => r.row);
  return {
    transactions: await read('ledger_transactions', 'raw_id'),
    history: await read('ledger_tx_status_history', 'id'),
    items: await read('ledger_bundle_items', 'raw_id, item_index'),
    rechecks: await read('ledger_tx_rechecks', 'raw_id'),
    rejected: await read('rejected_records', 'fingerprint'),
    proven: await read('backfill_proven_ranges', 'lo'),
  };
}

async function addTokens(database: Database): Promise<void> {
  await database.db.execute(sql`
    INSERT INTO ledger_tokens (tag, symbol, decimals, chain_type, chain_id, token_id, raw, updated_at)
    VALUES ('ethereum-usdc-0xAaAa', 'USDC', 6, 'ethereum', '1', '0xAaAa', '{}', now()),
           ('ethereum-usdc-0xaaaa-other', 'USDC', 6, 'ethereum', '1', '0xaaaa', '{}', now())`);
}

describe('a range write by COPY', () => {
  let copied: TestDatabase;
  let stated: TestDatabase;
  before(async () => {
    copied = await createTestDatabase();
    stated = await createTestDatabase();
    await addTokens(copied.database);
    await addTokens(stated.database);
  });
  after(async () => {
    await copied?.drop();
    await stated?.drop();
  });

  it('leaves every table as the one statement does, awkward text byte for byte', async () => {
    const { prepared, rest } = inputs();
    const withCopy = copied.database.withCopyConnection;
    assert.ok(withCopy, 'PostgreSQL copies');
    const byCopy = await withCopy((connection) =>
      copyRangeWrite(connection, { ...rest, records: prepared.records }),
    );
    const byStatement = await writeTransactions(stated.database.db, {
      records: prepared.records,
      statement: buildRangeWrite({ ...rest, records: prepared.records, divergent: [], assumeNew: true }),
    });
    assert.deepEqual(byCopy, byStatement);
    assert.equal(byCopy.inserted, prepared.records.length);
    const a = await tables(copied.database);
    const b = await tables(stated.database);
    for (const [name, rows] of Object.entries(b)) assert.ok(rows.length > 0, `the statement wrote ${name}`);
    assert.deepEqual(a, b);
    // What COPY's format would mangle came back as sent.
    const texts = await queryRows<{ data: string; sig: string }>(
      copied.database.db,
      sql`SELECT data, sig FROM ledger_transactions WHERE raw_id < 200 ORDER BY raw_id`,
    );
    assert.deepEqual(
      texts.map((r) => [r.data, r.sig]),
      AWKWARD.map((text) => [text, text]),
    );
    const tag = await queryRows<{ token_tag: string }>(
      copied.database.db,
      sql`SELECT token_tag FROM ledger_transactions WHERE raw_id = 200`,
    );
    assert.equal(tag[0]?.token_tag, 'ethereum-usdc-0xAaAa', 'the tag stored is the token list’s');
  });

  it('writes nothing when a record is stored already: the unique violation, for the full write', async () => {
    const { rest } = inputs();
    const withCopy = copied.database.withCopyConnection;
    assert.ok(withCopy);
    const before = await tables(copied.database);
    // 300 is new, 100 stored by the first test.
    const next = prepareBatch([makeLedgerTx({ rawId: 300 }), makeLedgerTx({ rawId: 100 })], {
      now: NOW,
      burnWindowMs: DEFAULT_REREAD_POLICY.burnWindowMs,
    });
    const failure = await withCopy((connection) =>
      copyRangeWrite(connection, {
        ...rest,
        range: { ...rest.range, proven: [{ lo: 100, hi: 300 }] },
        records: next.records,
      }),
    ).then(
      () => null,
      (error: unknown) => error,
    );
    assert.ok(failure instanceof DatabaseError, String(failure));
    assert.equal(failure.sqlstate, '23505');
    assert.deepEqual(await tables(copied.database), before, 'nothing of the batch was written');
    // The pool discarded the failed connection: the next write, on another, works.
    const again = await withCopy((connection) =>
      copyRangeWrite(connection, {
        ...rest,
        range: { ...rest.range, rejected: [], proven: [{ lo: 300, hi: 300 }] },
        records: prepareBatch([makeLedgerTx({ rawId: 300 })], { now: NOW, burnWindowMs: 0 }).records,
      }),
    );
    assert.equal(again.inserted, 1);
  });
});
