/** Read-only queries over the stored integrity checks (`hash_check`, `signature_check`) for `verify`. */
import { sql } from 'drizzle-orm';

import { type Executor, queryRows } from '../rows.js';

/** Counts of both checks over every stored record, and the first `limit` records that failed one. */
export async function readIntegrity(executor: Executor, limit: number): Promise<IntegrityReport> {
  const counts = await queryRows<{ hash_check: string | null; signature_check: string | null; n: string }>(
    executor,
    sql`SELECT hash_check, signature_check, count(*)::text AS n
        FROM ledger_transactions GROUP BY hash_check, signature_check`,
  );
  const hash = zero();
  const signature = zero();
  let mismatchTotal = 0;
  for (const row of counts) {
    const n = Number(row.n);
    add(hash, row.hash_check, n);
    add(signature, row.signature_check, n);
    if (row.hash_check === 'mismatch' || row.signature_check === 'mismatch') mismatchTotal += n;
  }
  const rows =
    mismatchTotal === 0
      ? []
      : await queryRows<{ raw_id: string; ledger_hash: string; hash_check: string; signature_check: string }>(
          executor,
          sql`SELECT raw_id::text AS raw_id, ledger_hash, hash_check, signature_check
              FROM ledger_transactions
              WHERE hash_check = 'mismatch' OR signature_check = 'mismatch'
              ORDER BY ledger_transactions.raw_id LIMIT ${Math.max(1, limit)}::int`,
        );
  const mismatches: IntegrityMismatch[] = rows.map((r) => ({
    rawId: Number(r.raw_id),
    ledgerHash: r.ledger_hash,
    checks: [
      ...(r.hash_check === 'mismatch' ? (['hash'] as const) : []),
      ...(r.signature_check === 'mismatch' ? (['signature'] as const) : []),
    ],
  }));
  return { hash, signature, mismatches, mismatchTotal };
}

function zero(): CheckCounts {
  return { ok: 0, mismatch: 0, unknown: 0, unchecked: 0 };
}

function add(counts: CheckCounts, outcome: string | null, n: number): void {
  if (outcome === 'ok' || outcome === 'mismatch' || outcome === 'unknown') counts[outcome] += n;
  else counts.unchecked += n;
}

/** Stored outcomes of one check; `unchecked`: rows written before the check existed, or signatures off. */
export interface CheckCounts {
  ok: number;
  mismatch: number;
  unknown: number;
  unchecked: number;
}

/** A stored record that is not what its sender signed. */
export interface IntegrityMismatch {
  rawId: number;
  ledgerHash: string;
  /** `hash`, `signature` or both. */
  checks: Array<'hash' | 'signature'>;
}

/** The integrity part of `verify`'s report. */
export interface IntegrityReport {
  hash: CheckCounts;
  signature: CheckCounts;
  /** The records with a mismatch, first by rawId (at most the limit asked for). */
  mismatches: IntegrityMismatch[];
  /** How many records have a mismatch. */
  mismatchTotal: number;
}
