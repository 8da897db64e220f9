/**
 * Comparing the mirror with the simulator's ground truth, field by field, for the sync tests.
 */
import assert from 'node:assert/strict';
import { sql } from 'drizzle-orm';

import type { Db } from '../../src/db/drizzle-db.js';
import { queryRows } from '../../src/db/rows.js';
import type { GroundTruthRecord, Simulator } from '../../src/simulator/index.js';

/** A record as the mirror should hold it: wire fields, absent ones as empty strings. */
export function expectedRow(record: GroundTruthRecord): Record<string, string> {
  return {
    raw_id: String(record.rawId),
    record_id: record.id,
    token_symbol: record.tokenSymbol,
    action: record.action,
    from_account: record.from,
    to_account: record.to,
    amount: record.amount,
    fee: record.fee,
    fee_recipient: record.feeRecipient,
    nonce: String(record.nonce),
    token_id: record.tokenID,
    chain_type: record.chainType,
    chain_id: record.chainID,
    data: record.data,
    version: record.version ?? '',
    sig: record.sig,
    ledger_hash: record.ledgerHash,
    status: record.status,
    internal_status: record.internalStatus,
    timestamp_ms: String(record.timestamp),
    target_chain_tx_hash: record.targetChainTxHash ?? '',
    express_chain_tx_hash: record.express?.chainTxHash ?? '',
    express_withdraw_fee: record.express?.withdrawFee ?? '',
    express_refund_ledger_hash: record.express?.refundLedgerHash ?? '',
    express_err: record.express?.err ?? '',
  };
}

/** Every stored record, as text, in rawId order. */
export async function storedRows(db: Db): Promise<Array<Record<string, string>>> {
  return queryRows<Record<string, string>>(
    db,
    sql`SELECT raw_id::text, record_id, token_symbol, action, from_account, to_account, amount::text,
          fee::text, fee_recipient, nonce::text, token_id, chain_type, chain_id, data, version, sig,
          ledger_hash, status, internal_status, timestamp_ms::text, target_chain_tx_hash,
          express_chain_tx_hash, express_withdraw_fee, express_refund_ledger_hash, express_err
        FROM ledger_transactions t ORDER BY t.raw_id`,
  );
}

/** The simulator's records that it serves well-formed. */
export function wellFormedTruth(simulator: Simulator): GroundTruthRecord[] {
  return [...simulator.records()].filter((record) => record.malformed === undefined);
}

/** Asserts the mirror equals the truth: the same rawIds, each with every field equal. */
export async function assertMirrorsTruth(
  db: Db,
  simulator: Simulator,
  options: { fields?: 'all' | 'keys' } = {},
) {
  const truth = wellFormedTruth(simulator);
  const rows = await storedRows(db);
  const stored = rows.map((row) => Number(row['raw_id']));
  const expected = truth.map((record) => record.rawId);
  const storedSet = new Set(stored);
  const expectedSet = new Set(expected);
  const missing = expected.filter((id) => !storedSet.has(id));
  const extra = stored.filter((id) => !expectedSet.has(id));
  assert.deepEqual(
    { missing: missing.slice(0, 20), extra: extra.slice(0, 20), count: stored.length },
    { missing: [], extra: [], count: expected.length },
    'the stored rawIds are exactly the service records',
  );
  if (options.fields === 'keys') return;
  for (let i = 0; i < truth.length; i++) {
    assert.deepEqual(rows[i], expectedRow(truth[i]!), `record ${truth[i]!.rawId} equals the service's`);
  }
}

/**
 * The table holds exactly the records of `pages` of the service's list (newest first, ten a page,
 * nothing arriving meanwhile), field by field. Returns how many that is.
 */
export async function assertMirrorsPages(
  db: Db,
  simulator: Simulator,
  pages: ReadonlySet<number>,
): Promise<number> {
  const rows = await storedRows(db);
  // Pages hold every record served, malformed ones included (those are set aside, not stored).
  const newestFirst = [...simulator.records()].reverse();
  const expected = new Map(
    newestFirst
      .filter((record, i) => pages.has(Math.floor(i / 10) + 1) && record.malformed === undefined)
      .map((record) => [record.rawId, record]),
  );
  const stored = rows.map((row) => Number(row['raw_id']));
  const have = new Set(stored);
  assert.deepEqual(
    {
      missing: [...expected.keys()].filter((id) => !have.has(id)).slice(0, 20),
      extra: stored.filter((id) => !expected.has(id)).slice(0, 20),
    },
    { missing: [], extra: [] },
    `the stored records are those of pages ${[...pages].sort((a, b) => a - b).join(',')}`,
  );
  for (const row of rows) {
    const record = expected.get(Number(row['raw_id']))!;
    assert.deepEqual(row, expectedRow(record), `record ${record.rawId} equals the service's`);
  }
  return rows.length;
}
