import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { readConflicts } from '../../src/db/queries/conflicts.js';
import { createBackfillStore } from '../../src/db/stores/pg-backfill-store.js';
import { makeLedgerTx } from '../helpers/ledger-tx.js';
import { MINUTE, useStoreFixture } from '../helpers/store-fixture.js';

interface Conflict {
  raw_id: string;
  fields: string[];
  stored: Record<string, unknown>;
  served: Record<string, unknown>;
  stream_key: string | null;
  page: number | null;
  backfill_id: string | null;
  seen_count: number;
}

describe('PostgreSQL store: conflicting content for one rawId', () => {
  const f = useStoreFixture();
  const conflicts = () =>
    f.q<Conflict>(sql`
      SELECT raw_id::text, fields, stored, served, stream_key, page, backfill_id, seen_count
      FROM ledger_tx_conflicts c ORDER BY c.raw_id, c.page`);
  const stored = (rawId: number) =>
    f.q<Record<string, string>>(sql`
      SELECT amount::text, sig, record_id, status, target_chain_tx_hash, express_err, timestamp_ms::text
      FROM ledger_transactions WHERE raw_id = ${rawId}`);

  it('updates the fields that legitimately change, with no conflict', async () => {
    const l = await f.lease();
    const tx = makeLedgerTx({ rawId: 1, action: 'burn', status: 'confirmed', id: '', timestamp: 0 });
    await f.store.commitPage(f.page(l, [tx]));
    const settled = {
      ...tx,
      status: 'packaged',
      id: 'b7',
      timestamp: 1_700_000_000_000,
      targetChainTxHash: '0xlanded',
      internalStatus: '{"status":"failed","index":0,"msg":"err_x"}',
      internalStatusParsed: { status: 'failed', json: { status: 'failed', index: 0, msg: 'err_x' } },
      express: { chainTxHash: 'c', withdrawFee: '1', refundLedgerHash: 'r', err: 'e' },
    };
    const counts = await f.store.commitPage(f.page(l, [settled]));
    assert.deepEqual(counts, { inserted: 0, updated: 1, unchanged: 0, rejected: 0, conflicts: 0 });
    assert.deepEqual(await stored(1), [
      {
        amount: '1000',
        sig: '0xsig',
        record_id: 'b7',
        status: 'packaged',
        target_chain_tx_hash: '0xlanded',
        express_err: 'e',
        timestamp_ms: '1700000000000',
      },
    ]);
    assert.deepEqual(await conflicts(), []);
  });

  it('keeps the first sighting of a commit spanning pages, and records a later disagreeing one with its page', async () => {
    const l = await f.lease();
    const a = makeLedgerTx({ rawId: 5 });
    const counts = await f.store.commitPage({
      ...f.page(l, [a]),
      pages: [
        { page: 4, records: [a] },
        { page: 5, records: [{ ...a, amount: '7', status: 'packaged' }] },
      ],
    });
    assert.deepEqual(counts, { inserted: 1, updated: 0, unchanged: 0, rejected: 0, conflicts: 1 });
    assert.equal((await stored(5))[0]?.amount, '1000');
    const [c] = await conflicts();
    assert.deepEqual(
      [c?.raw_id, c?.fields, c?.stored['amount'], c?.served['amount'], c?.stream_key, c?.page],
      ['5', ['amount'], 1000, 7, 'txs', 5],
    );
  });

  it('records a conflict found by a re-read, and keeps re-reading the record', async () => {
    const l = await f.lease();
    const tx = makeLedgerTx({ rawId: 9, status: 'confirmed', id: '', timestamp: 0 });
    await f.store.commitPage(f.page(l, [tx]));
    f.clock = new Date(f.clock.getTime() + MINUTE);
    const counts = await f.store.commitReread({
      records: [{ ...tx, status: 'packaged', id: 'b', timestamp: 5, sig: '0xforged' }],
      missing: [],
      now: f.clock,
    });
    assert.deepEqual(counts, { inserted: 0, updated: 0, unchanged: 0, rejected: 0, conflicts: 1 });
    assert.deepEqual(
      (await stored(9)).map((r) => [r.status, r.sig]),
      [['confirmed', '0xsig']],
    );
    const [c] = await conflicts();
    assert.deepEqual([c?.fields, c?.stream_key, c?.page], [['sig'], null, null]);
    const [recheck] = await f.q<{ attempts: number }>(
      sql`SELECT attempts FROM ledger_tx_rechecks WHERE raw_id = 9`,
    );
    assert.equal(recheck?.attempts, 1, 'still queued for a re-read, one attempt spent');
  });

  it('records a conflict of a parallel backfill range with its stream, page and backfill', async () => {
    const proofs = createBackfillStore({ database: f.t.database, now: () => f.clock });
    const tx = makeLedgerTx({ rawId: 3 });
    const range = { key: 'txs', backfillId: 'bf-1', proven: [] };
    await proofs.commitRangePages({ ...range, pages: [{ page: 2, records: [tx], rejected: [] }] });
    const counts = await proofs.commitRangePages({
      ...range,
      pages: [
        { page: 3, records: [{ ...tx, to: 'eid-someone-else' }], rejected: [] },
        { page: 4, records: [{ ...tx, to: 'eid-someone-else' }], rejected: [] },
      ],
    });
    assert.equal(counts?.conflicts, 1, 'one record, one version: one conflict');
    const rows = await conflicts();
    assert.deepEqual(
      rows.map((c) => [c.raw_id, c.fields, c.stream_key, c.page, c.backfill_id, c.seen_count]),
      [['3', ['to_account'], 'txs', 3, 'bf-1', 1]],
    );
    // Served so once more: the same conflict, seen twice.
    await proofs.commitRangePages({
      ...range,
      pages: [{ page: 3, records: [{ ...tx, to: 'eid-someone-else' }], rejected: [] }],
    });
    assert.deepEqual(
      (await conflicts()).map((c) => c.seen_count),
      [2],
    );
  });

  it('reports conflicts in rawId order, 9 before 10', async () => {
    for (const rawId of [10, 9]) {
      await f.q(sql`
        INSERT INTO ledger_tx_conflicts (fingerprint, raw_id, fields, stored, served, detected_at, seen_at)
        VALUES (${`fp-${rawId}`}, ${rawId}, ARRAY['amount'], '{}'::jsonb, '{}'::jsonb, now(), now())`);
    }
    const report = await readConflicts(f.t.database.db, 10);
    assert.deepEqual(
      report.conflicts.map((c) => c.rawId),
      [9, 10],
    );
  });
});
