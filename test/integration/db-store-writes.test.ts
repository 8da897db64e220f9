import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { countRejected, listStreams } from '../../src/db/queries/stream-queries.js';
import { queryOne } from '../../src/db/rows.js';
import { createBackfillStore } from '../../src/db/stores/pg-backfill-store.js';
import { tokensListedAt, upsertTokens } from '../../src/db/stores/tokens.js';
import { asPageCheckpoint } from '../../src/domain/checkpoints.js';
import { DatabaseError } from '../../src/errors.js';
import { makeLedgerTx } from '../helpers/ledger-tx.js';
import { MINUTE, useStoreFixture } from '../helpers/store-fixture.js';

/** The arweave token as `/info` lists it. */
const AR_TOKEN = {
  tag: 'arweave-AR-AbC',
  symbol: 'AR',
  decimals: 12,
  chainType: 'arweave',
  chainID: '0',
  id: 'AbC',
  raw: { x: 1 },
};

const BIG = '115792089237316195423570985008687907853269984665640564039457584007913129639935';

describe('PostgreSQL store: writes', () => {
  const f = useStoreFixture();

  it('round-trips every field exactly', async () => {
    const tx = makeLedgerTx({
      rawId: 9_007_199_254_740_991,
      amount: BIG,
      fee: `${BIG}9`,
      nonce: '18446744073709551616',
      action: 'bundle',
      data: JSON.stringify({
        bundle: { items: [{ tag: 'a', chainID: '1', from: 'f', to: 't', amount: BIG }] },
      }),
      internalStatus: '{"status":"failed","index":-1,"msg":"err_x"}',
      internalStatusParsed: { status: 'failed', json: { status: 'failed', index: -1, msg: 'err_x' } },
      timestamp: 1_700_000_000_123,
      targetChainTxHash: 'tch',
      express: { chainTxHash: 'c', withdrawFee: '12', refundLedgerHash: 'r', err: 'boom' },
    });
    const counts = await f.store.commitPage(f.page(await f.lease(), [tx]));
    assert.deepEqual(counts, { inserted: 1, updated: 0, unchanged: 0, rejected: 0, conflicts: 0 });
    const [row] = await f.q<Record<string, string | null>>(sql`
      SELECT raw_id::text, record_id, token_symbol, action, from_account, to_account, amount::text, fee::text,
             fee_recipient, nonce::text, token_id, chain_type, chain_id, data, version, sig, ledger_hash, status,
             internal_status, internal_status_code, internal_status_json::text, timestamp_ms::text,
             to_char(ledger_time AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') AS ledger_time,
             target_chain_tx_hash, express_chain_tx_hash, express_withdraw_fee, express_refund_ledger_hash,
             express_err, token_tag, first_seen_at = updated_at AS same_times
      FROM ledger_transactions`);
    assert.deepEqual(row, {
      raw_id: '9007199254740991',
      record_id: tx.id,
      token_symbol: 'USDC',
      action: 'bundle',
      from_account: tx.from,
      to_account: tx.to,
      amount: BIG,
      fee: `${BIG}9`,
      fee_recipient: tx.feeRecipient,
      nonce: '18446744073709551616',
      token_id: tx.tokenID,
      chain_type: 'ethereum',
      chain_id: '1',
      data: tx.data,
      version: 'v1',
      sig: '0xsig',
      ledger_hash: tx.ledgerHash,
      status: 'packaged',
      internal_status: '{"status":"failed","index":-1,"msg":"err_x"}',
      internal_status_code: 'failed',
      internal_status_json: '{"msg": "err_x", "index": -1, "status": "failed"}',
      timestamp_ms: '1700000000123',
      ledger_time: '2023-11-14T22:13:20.123',
      target_chain_tx_hash: 'tch',
      express_chain_tx_hash: 'c',
      express_withdraw_fee: '12',
      express_refund_ledger_hash: 'r',
      express_err: 'boom',
      token_tag: 'ethereum-usdc-0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
      same_times: true as unknown as string,
    });
    const items = await f.q<{ amount: string; item_index: number }>(
      sql`SELECT amount::text, item_index FROM ledger_bundle_items`,
    );
    assert.deepEqual(items, [{ amount: BIG, item_index: 0 }]);
  });

  it('stores text exactly as served, whatever characters it holds', async () => {
    // The records travel to PostgreSQL as JSON: text must come out byte for byte, never as JSON
    // re-spelled (spacing, key order, escapes) nor as a JSON null or number.
    const texts = [
      '{"a" : 1,  "b":[ ], "a":"dup"}',
      'quote " backslash \\ slash / braces {x,y} tab\there\nnewline',
      'NULL',
      'null',
      '12.50',
      '',
      ' héllo 🚀 \u00e9\u0301 ',
      '\\u0041 stays six characters',
    ];
    const txs = texts.map((text, i) =>
      makeLedgerTx({
        rawId: 100 + i,
        data: text,
        sig: text,
        express: { chainTxHash: text, withdrawFee: '', refundLedgerHash: '', err: text },
      }),
    );
    await f.store.commitPage(f.page(await f.lease(), txs));
    const rows = await f.q<{ data: string; sig: string; express_chain_tx_hash: string; express_err: string }>(
      sql`SELECT data, sig, express_chain_tx_hash, express_err FROM ledger_transactions ORDER BY raw_id`,
    );
    assert.deepEqual(
      rows,
      texts.map((text) => ({ data: text, sig: text, express_chain_tx_hash: text, express_err: text })),
    );
  });

  it('resolves duplicates inside one batch: the last one wins', async () => {
    const counts = await f.store.commitPage(
      f.page(await f.lease(), [
        makeLedgerTx({ rawId: 1, status: 'confirmed', id: '' }),
        makeLedgerTx({ rawId: 2 }),
        makeLedgerTx({ rawId: 1, status: 'packaged', id: 'b9' }),
      ]),
    );
    assert.deepEqual(counts, { inserted: 2, updated: 0, unchanged: 0, rejected: 0, conflicts: 0 });
    const rows = await f.q<{ raw_id: string; record_id: string; status: string }>(
      sql`SELECT raw_id::text, record_id, status FROM ledger_transactions ORDER BY raw_id`,
    );
    assert.deepEqual(rows, [
      { raw_id: '1', record_id: 'b9', status: 'packaged' },
      { raw_id: '2', record_id: 'batch-1', status: 'packaged' },
    ]);
  });

  it('does not rewrite an unchanged row', async () => {
    const l = await f.lease();
    const records = [makeLedgerTx({ rawId: 1 }), makeLedgerTx({ rawId: 2, status: 'confirmed', id: '' })];
    await f.store.commitPage(f.page(l, records));
    const before = await f.q<{ xmin: string; updated_at: Date }>(
      sql`SELECT xmin::text, updated_at FROM ledger_transactions ORDER BY raw_id`,
    );
    f.clock = new Date(f.clock.getTime() + MINUTE);
    const counts = await f.store.commitPage(f.page(l, records));
    assert.deepEqual(counts, { inserted: 0, updated: 0, unchanged: 2, rejected: 0, conflicts: 0 });
    const afterRows = await f.q<{ xmin: string; updated_at: Date }>(
      sql`SELECT xmin::text, updated_at FROM ledger_transactions ORDER BY raw_id`,
    );
    assert.deepEqual(afterRows, before);
    const history = await queryOne<{ n: number }>(
      f.t.database.db,
      sql`SELECT count(*)::int AS n FROM ledger_tx_status_history`,
    );
    // One row for the record not final when first stored; none for the final one, none for either sighting again.
    assert.equal(history.n, 1);
  });

  it('keeps no history row for a record final when first stored until it changes, then its first version too', async () => {
    const l = await f.lease();
    const served = makeLedgerTx({ rawId: 9 });
    await f.store.commitPage(f.page(l, [served, makeLedgerTx({ rawId: 10 })]));
    const rowsOf = async () =>
      (
        await f.q<{ raw_id: string; code: string; observed_at: Date }>(sql`
          SELECT raw_id::text, internal_status_code AS code, observed_at FROM ledger_tx_status_history
          ORDER BY raw_id, observed_at`)
      ).map((h) => [h.raw_id, h.code, new Date(h.observed_at).toISOString()]);
    assert.deepEqual(await rowsOf(), []);
    assert.deepEqual(await documentedHistory(f.t.url, 10), [
      ['packaged', 'success', '2026-03-01T12:00:00.000Z'],
    ]);
    f.clock = new Date(f.clock.getTime() + MINUTE);
    await f.store.commitPage(
      f.page(l, [
        {
          ...served,
          internalStatus: '{"status":"failed"}',
          internalStatusParsed: { status: 'failed', json: { status: 'failed' } },
        },
      ]),
    );
    assert.deepEqual(await rowsOf(), [
      ['9', 'success', '2026-03-01T12:00:00.000Z'],
      ['9', 'failed', '2026-03-01T12:01:00.000Z'],
    ]);
    assert.deepEqual(await documentedHistory(f.t.url, 9), [
      ['packaged', 'success', '2026-03-01T12:00:00.000Z'],
      ['packaged', 'failed', '2026-03-01T12:01:00.000Z'],
    ]);
    f.clock = new Date(f.clock.getTime() + MINUTE);
    await f.store.commitPage(f.page(l, [served]));
    assert.deepEqual(
      (await rowsOf()).map((h) => h[1]),
      ['success', 'failed', 'success'],
      'once the history holds the record, a change adds the new version only',
    );
  });

  /** One record's status history by the example statement of docs/analytics.md. */
  async function documentedHistory(url: string, rawId: number): Promise<string[][]> {
    const doc = readFileSync(new URL('../../docs/analytics.md', import.meta.url), 'utf8');
    const block = /^-- records not final yet, and one record's status history.*\n([\s\S]*?)\n```/m.exec(
      doc,
    )?.[1];
    const statement = block?.split(';')[1]?.trim() ?? '';
    assert.ok(statement.includes('$1'), 'the one-record history example of docs/analytics.md');
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const { rows } = await client.query<{
        status: string;
        internal_status_code: string;
        observed_at: Date;
      }>(statement, [rawId]);
      return rows.map((r) => [r.status, r.internal_status_code, new Date(r.observed_at).toISOString()]);
    } finally {
      await client.end();
    }
  }

  it('appends a status-history row on each change of status or internal status', async () => {
    const l = await f.lease();
    const confirmed = makeLedgerTx({ rawId: 7, status: 'confirmed', id: '', timestamp: 0 });
    await f.store.commitPage(f.page(l, [confirmed]));
    f.clock = new Date(f.clock.getTime() + MINUTE);
    // id and timestamp fill in: updated, but no status change, so no history row.
    await f.store.commitPage(f.page(l, [{ ...confirmed, id: 'b1' }]));
    f.clock = new Date(f.clock.getTime() + MINUTE);
    const counts = await f.store.commitPage(
      f.page(l, [{ ...confirmed, id: 'b1', status: 'packaged', timestamp: 5 }]),
    );
    assert.deepEqual(counts, { inserted: 0, updated: 1, unchanged: 0, rejected: 0, conflicts: 0 });
    f.clock = new Date(f.clock.getTime() + MINUTE);
    await f.store.commitPage(
      f.page(l, [
        {
          ...confirmed,
          id: 'b1',
          status: 'packaged',
          timestamp: 5,
          internalStatus: '{"status":"failed"}',
          internalStatusParsed: { status: 'failed', json: { status: 'failed' } },
        },
      ]),
    );
    const history = await f.q<{ status: string; code: string; observed_at: Date }>(sql`
      SELECT status, internal_status_code AS code, observed_at FROM ledger_tx_status_history ORDER BY id`);
    assert.deepEqual(
      history.map((h) => [h.status, h.code, new Date(h.observed_at).toISOString()]),
      [
        ['confirmed', 'success', '2026-03-01T12:00:00.000Z'],
        ['packaged', 'success', '2026-03-01T12:02:00.000Z'],
        ['packaged', 'failed', '2026-03-01T12:03:00.000Z'],
      ],
    );
    const [row] = await f.q<{ ledger_time: Date | null; first_seen_at: Date; updated_at: Date }>(
      sql`SELECT ledger_time, first_seen_at, updated_at FROM ledger_transactions`,
    );
    assert.equal(new Date(row!.first_seen_at).toISOString(), '2026-03-01T12:00:00.000Z');
    assert.equal(new Date(row!.updated_at).toISOString(), '2026-03-01T12:03:00.000Z');
    assert.equal(new Date(row!.ledger_time!).getTime(), 5);
  });

  it('writes bundle items with the bundle, and keeps them when it is served again with other data', async () => {
    const l = await f.lease();
    const data = (amounts: string[]) =>
      JSON.stringify({
        bundle: {
          items: amounts.map((amount, i) => ({ tag: 'x', chainID: '1', from: `f${i}`, to: 't', amount })),
        },
      });
    const bundle = makeLedgerTx({ rawId: 3, action: 'bundle', data: data(['1', '2', '3']) });
    await f.store.commitPage(f.page(l, [bundle]));
    const items = () =>
      f.q<{ i: number; amount: string }>(
        sql`SELECT item_index AS i, amount::text FROM ledger_bundle_items ORDER BY 1`,
      );
    assert.deepEqual(await items(), [
      { i: 0, amount: '1' },
      { i: 1, amount: '2' },
      { i: 2, amount: '3' },
    ]);
    // `data` is signed: a bundle served again with other data is a conflict, not an update.
    const counts = await f.store.commitPage(f.page(l, [{ ...bundle, data: data(['5', '6']) }]));
    assert.equal(counts.conflicts, 1);
    assert.deepEqual(await items(), [
      { i: 0, amount: '1' },
      { i: 1, amount: '2' },
      { i: 2, amount: '3' },
    ]);
    const stored = await queryOne<{ data: string }>(
      f.t.database.db,
      sql`SELECT data FROM ledger_transactions`,
    );
    assert.equal(stored.data, bundle.data);
  });

  it('commits a page and its checkpoint together or not at all', async () => {
    const l = await f.lease();
    await f.store.commitPage(
      f.page(l, [makeLedgerTx({ rawId: 1 })], {
        walk: { mode: 'backfill', nextPage: 2, headRawId: 10, totalPages: 5 },
      }),
    );
    // Make the last write of the commit (the rejected record) fail, after rows and checkpoint.
    await f.t.database.db.execute(
      sql.raw(`
      CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS
        $$ BEGIN IF NEW.reason = 'poison' THEN RAISE EXCEPTION 'refused by test'; END IF; RETURN NEW; END $$;
      CREATE TRIGGER refuse_poison BEFORE INSERT ON rejected_records FOR EACH ROW EXECUTE FUNCTION refuse_poison();
    `),
    );
    try {
      await assert.rejects(
        f.store.commitPage(
          f.page(l, [makeLedgerTx({ rawId: 2 }), makeLedgerTx({ rawId: 1, fee: '55' })], {
            page: 2,
            rejected: [{ reason: 'poison', raw: '{}' }],
            walk: { mode: 'backfill', nextPage: 3, headRawId: 10, totalPages: 5 },
          }),
        ),
        // Raised by the trigger (SQLSTATE P0001), reported by its code: the server's text stays out.
        (error: unknown) => error instanceof DatabaseError && error.sqlstate === 'P0001',
      );
    } finally {
      await f.t.database.db.execute(
        sql.raw('DROP TRIGGER refuse_poison ON rejected_records; DROP FUNCTION refuse_poison();'),
      );
    }
    const rows = await f.q<{ raw_id: string; fee: string }>(
      sql`SELECT raw_id::text, fee::text FROM ledger_transactions`,
    );
    assert.deepEqual(rows, [{ raw_id: '1', fee: '10' }]);
    const [stream] = await listStreams(f.t.database.db);
    assert.equal(asPageCheckpoint(stream?.walk)?.nextPage, 2);
  });

  it('stores rejected records with their reason, once per distinct record', async () => {
    const l = await f.lease();
    const bad = { reason: 'rawId is missing', raw: '{"ledgerHash":"0xbad"}', ledgerHash: '0xbad' };
    const counts = await f.store.commitPage(
      f.page(l, [makeLedgerTx({ rawId: 1 }), makeLedgerTx({ rawId: 2, amount: '12.5' })], {
        rejected: [bad, bad],
      }),
    );
    assert.deepEqual(counts, { inserted: 1, updated: 0, unchanged: 0, rejected: 3, conflicts: 0 });
    await f.store.commitPage(f.page(l, [], { page: 4, rejected: [bad] }));
    const rows = await f.q<{
      reason: string;
      raw_id: string | null;
      ledger_hash: string | null;
      page: number;
      seen_count: number;
    }>(sql`SELECT reason, raw_id::text, ledger_hash, page, seen_count FROM rejected_records ORDER BY reason`);
    assert.equal(rows.length, 2);
    assert.match(rows[0]!.reason, /^amount is not a decimal digit string/);
    assert.equal(rows[0]!.raw_id, '2');
    assert.deepEqual(rows[1], {
      reason: 'rawId is missing',
      raw_id: null,
      ledger_hash: '0xbad',
      page: 4,
      seen_count: 3,
    });
    assert.deepEqual(await countRejected(f.t.database.db), { distinct: 2, sightings: 4 });
  });

  it('sets aside a record whose ledger hash is stored under another rawId', async () => {
    const l = await f.lease();
    await f.store.commitPage(f.page(l, [makeLedgerTx({ rawId: 1, ledgerHash: '0xdup' })]));
    const counts = await f.store.commitPage(
      f.page(l, [makeLedgerTx({ rawId: 2, ledgerHash: '0xdup' }), makeLedgerTx({ rawId: 3 })]),
    );
    assert.deepEqual(counts, { inserted: 1, updated: 0, unchanged: 0, rejected: 1, conflicts: 0 });
    const [rejected] = await f.q<{ reason: string; raw_id: string }>(
      sql`SELECT reason, raw_id::text FROM rejected_records`,
    );
    assert.equal(rejected?.raw_id, '2');
    assert.match(rejected?.reason ?? '', /already stored under rawId 1/);
  });

  it('uses the /info tag that matches a record, including for records stored before the token was known', async () => {
    const l = await f.lease();
    const ar = makeLedgerTx({ rawId: 1, tokenSymbol: 'ar', chainType: 'arweave', tokenID: 'AbC' });
    await f.store.commitPage(f.page(l, [ar]));
    const tokens = await upsertTokens(f.t.database, [AR_TOKEN]);
    assert.deepEqual(tokens, { inserted: 1, updated: 0, unchanged: 0, retagged: 1 });
    await f.store.commitPage(
      f.page(l, [makeLedgerTx({ rawId: 2, tokenSymbol: 'Ar', chainType: 'arweave', tokenID: 'AbC' })]),
    );
    const tags = await f.q<{ token_tag: string }>(
      sql`SELECT token_tag FROM ledger_transactions ORDER BY raw_id`,
    );
    assert.deepEqual(tags, [{ token_tag: 'arweave-AR-AbC' }, { token_tag: 'arweave-AR-AbC' }]);
    const again = await upsertTokens(f.t.database, [AR_TOKEN]);
    assert.deepEqual(again, { inserted: 0, updated: 0, unchanged: 1, retagged: 0 });
    // A write whose snapshot was older than the token (it raced the listing) left a derived tag:
    // the next listing corrects it, though the token is no longer new.
    await f.q(sql`UPDATE ledger_transactions SET token_tag = 'arweave-ar-AbC' WHERE raw_id = 2`);
    const next = await upsertTokens(f.t.database, [AR_TOKEN]);
    assert.deepEqual(next, { inserted: 0, updated: 0, unchanged: 1, retagged: 1 });
    assert.deepEqual(await f.q(sql`SELECT DISTINCT token_tag FROM ledger_transactions`), [
      { token_tag: 'arweave-AR-AbC' },
    ]);
    // Unchanged, but listed: the token list counts as fresh from this refresh on.
    const later = new Date(Date.now() + 5 * MINUTE);
    await upsertTokens(f.t.database, [AR_TOKEN], { now: later });
    assert.equal((await tokensListedAt(f.t.database))?.getTime(), later.getTime());
  });

  it('lets parallel backfill ranges and a stream write the same records at once without loss or duplicates', async () => {
    // A range write inserts without ON CONFLICT: a writer that inserts the same record meanwhile
    // makes it fail with a unique violation, and the store repeats it.
    const proofs = createBackfillStore({ database: f.t.database, now: () => f.clock });
    const walk = await f.store.acquireStream({ account: 'y' }, 'runner-w', MINUTE);
    // Not final: each is kept in the history once, whichever write stored it.
    const records = Array.from({ length: 300 }, (_, i) =>
      makeLedgerTx({ rawId: i + 1, status: 'confirmed', id: '' }),
    );
    // Open the connections first, so the writes run at the same time.
    await Promise.all(Array.from({ length: 8 }, () => f.q(sql`SELECT pg_sleep(0.05)`)));
    const results = await Promise.all(
      Array.from({ length: 8 }, (_, i) =>
        i % 4 === 3
          ? f.store.commitPage(f.page(walk.lease, records))
          : proofs.commitRangePages({
              key: 'txs',
              backfillId: 'bf-race',
              proven: [{ lo: 1, hi: 300 }],
              pages: [{ page: i + 1, records: i % 2 ? records : [...records].reverse(), rejected: [] }],
            }),
      ),
    );
    assert.equal(
      results.reduce((n, c) => n + c.inserted, 0),
      300,
    );
    const counts = await queryOne<{ rows: number; history: number; conflicts: number }>(
      f.t.database.db,
      sql`SELECT (SELECT count(*)::int FROM ledger_transactions) AS rows,
                 (SELECT count(*)::int FROM ledger_tx_status_history) AS history,
                 (SELECT count(*)::int FROM ledger_tx_conflicts) AS conflicts`,
    );
    assert.deepEqual(counts, { rows: 300, history: 300, conflicts: 0 });
  });

  it('keeps every version in the history when streams race to insert a record with different statuses', async () => {
    // A stream's insert may meet a row another stream inserted after the statement began: the
    // version it replaces (final, so without a history row of its own) must still be kept.
    const a = await f.store.acquireStream({}, 'runner-a', MINUTE);
    const b = await f.store.acquireStream({ account: 'x' }, 'runner-b', MINUTE);
    const packaged = Array.from({ length: 200 }, (_, i) => makeLedgerTx({ rawId: i + 1 }));
    const confirmed = packaged.map((tx) => ({ ...tx, status: 'confirmed', id: '', timestamp: 0 }));
    // Open the connections first, so the writes run at the same time.
    await Promise.all(Array.from({ length: 10 }, () => f.q(sql`SELECT pg_sleep(0.05)`)));
    await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        f.store.commitPage(f.page(i % 2 ? a.lease : b.lease, i % 2 ? packaged : [...confirmed].reverse())),
      ),
    );
    // Both versions were stored, one over the other: each record changed at least once, so its
    // history starts with its first sighting and ends with its row.
    const wrong = await f.q<{ raw_id: number; problem: string }>(sql`
      SELECT t.raw_id, CASE
          WHEN count(h.id) < 2 THEN 'fewer than two versions'
          WHEN min(h.observed_at) <> t.first_seen_at THEN 'does not start at first_seen_at'
          WHEN (array_agg(h.status ORDER BY h.id DESC))[1] <> t.status THEN 'does not end with the row'
          WHEN t.status_changes <> count(h.id) - 1 THEN 'status_changes is not the changes in the history'
          ELSE 'two versions alike in a row' END AS problem
      FROM ledger_transactions t LEFT JOIN ledger_tx_status_history h USING (raw_id)
      GROUP BY t.raw_id, t.first_seen_at, t.status, t.status_changes
      HAVING count(h.id) < 2 OR min(h.observed_at) <> t.first_seen_at
          OR (array_agg(h.status ORDER BY h.id DESC))[1] <> t.status
          OR t.status_changes <> count(h.id) - 1
          OR EXISTS (
            SELECT 1 FROM (
              SELECT status, lag(status) OVER (ORDER BY id) AS before
              FROM ledger_tx_status_history x WHERE x.raw_id = t.raw_id
            ) v WHERE v.status = v.before
          )
      ORDER BY t.raw_id`);
    assert.deepEqual(wrong.slice(0, 5), []);
  });

  it('keeps the first version of a record whose other fields another writer changed while its status changed', async () => {
    // A writer that changes a final record's row but not its status (a token retag, new express
    // fields) writes no history; a status change waiting on it must still write the first version.
    const l = await f.lease();
    const packaged = makeLedgerTx({ rawId: 5 });
    await f.store.commitPage(f.page(l, [packaged]));
    const stored = await queryOne<{ first_seen_at: string }>(
      f.t.database.db,
      sql`SELECT first_seen_at::text FROM ledger_transactions WHERE raw_id = 5`,
    );
    f.clock = new Date(f.clock.getTime() + MINUTE);
    const other = new pg.Client({ connectionString: f.t.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query(`UPDATE ledger_transactions SET token_tag = token_tag || '-x' WHERE raw_id = 5`);
      const change = f.store.commitPage(
        f.page(l, [
          {
            ...packaged,
            internalStatus: '{"status":"failed"}',
            internalStatusParsed: { status: 'failed', json: { status: 'failed' } },
          },
        ]),
      );
      // The status change has taken its snapshot and waits for the other writer's lock.
      for (let waited = 0; ; waited += 20) {
        const waiting = await other.query(
          `SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND datname = current_database()`,
        );
        if (waiting.rowCount) break;
        assert.ok(waited < 10_000, 'the status change waits for the lock');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      await other.query('COMMIT');
      await change;
    } finally {
      await other.end();
    }
    const history = await f.q<{ internal_status_code: string | null; observed_at: string }>(
      sql`SELECT internal_status_code, observed_at::text FROM ledger_tx_status_history WHERE raw_id = 5 ORDER BY id`,
    );
    assert.deepEqual(
      history.map((h) => h.internal_status_code),
      ['success', 'failed'],
    );
    assert.equal(history[0]?.observed_at, stored.first_seen_at);
    const [row] = await f.q<{ status_changes: number }>(
      sql`SELECT status_changes FROM ledger_transactions WHERE raw_id = 5`,
    );
    assert.equal(row?.status_changes, 1);
  });

  it('lets two streams write the same records concurrently without loss or duplicates', async () => {
    const a = await f.store.acquireStream({}, 'runner-a', MINUTE);
    const b = await f.store.acquireStream({ account: 'x' }, 'runner-b', MINUTE);
    const records = Array.from({ length: 200 }, (_, i) => makeLedgerTx({ rawId: i + 1 }));
    const reversed = [...records].reverse();
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        f.store.commitPage(f.page(i % 2 ? a.lease : b.lease, i % 2 ? records : reversed)),
      ),
    );
    assert.equal(
      results.reduce((n, c) => n + c.inserted, 0),
      200,
    );
    const n = await queryOne<{ n: number }>(
      f.t.database.db,
      sql`SELECT count(*)::int AS n FROM ledger_transactions`,
    );
    assert.equal(n.n, 200);
  });
});
