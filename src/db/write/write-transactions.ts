/**
 * The record write's I/O: runs the statement of one of its modes (page, range, re-read; see
 * `record-write-sql.ts`) and reads its result row back as counts, conflicts and clashes.
 */
import type { SQL } from 'drizzle-orm';
import type { RejectedRecord } from '../../domain/model.js';
import { type Executor, queryRows, queryRowsPrepared } from '../rows.js';
import type { ServedRecord } from './record-write-sql.js';

/** What {@link writeTransactions} did. */
export interface TransactionWriteResult {
  /** False when a page write was refused for a stale fence; then nothing was written. */
  fenced: boolean;
  inserted: number;
  updated: number;
  unchanged: number;
  /**
   * Sightings whose immutable fields differ from the version kept (the stored row, or the first
   * sighting of a new record): each is recorded in `ledger_tx_conflicts`, none is stored.
   */
  conflicts: number;
  /** The rawIds of `records` in conflict with the stored row (left as they were). */
  conflicted: number[];
  /** Records refused because their `ledgerHash` is stored under another `rawId`. */
  clashes: RejectedRecord[];
}

/**
 * Runs a record write's statement (`buildPageWrite`, `buildRangeWrite` or `buildRereadWrite`):
 * upserts encoded records keyed by `raw_id` in one statement. A row identical to the stored one
 * is not rewritten (no new row version, `updated_at` kept); a row whose immutable fields differ
 * from the stored one is not written either, but recorded as a conflict with both versions, as
 * are `divergent` sightings. A new row, or a changed `status` / `internal_status`, appends a
 * status-history row; a new row rewrites its bundle items. The token tag is replaced by the
 * `ledger_tokens` tag matching it (exact first, then case-insensitive: the rule of
 * `createTokenTagMatcher`). The page and range writes queue records not final for re-reading
 * (keeping an existing schedule), and final ones leave the queue.
 */
export async function writeTransactions(
  executor: Executor,
  input: {
    /** The statement of one mode of the write. */
    statement: SQL;
    /** The records it writes (`records` of its input). */
    records: readonly ServedRecord[];
    /**
     * Run as a named prepared statement (parsed once per connection). Only over connections with
     * `plan_cache_mode = force_custom_plan`, as `openDatabase` makes them: a generic plan made
     * while the table was small would scan it whole once it is large. Default false.
     */
    prepared?: boolean | undefined;
  },
): Promise<TransactionWriteResult> {
  const query = input.statement;
  type Result = {
    fenced: number;
    inserted: number;
    written: number;
    conflicts: number;
    kept_conflicts: unknown;
    clashes: unknown;
  };
  const [result] = input.prepared
    ? await queryRowsPrepared<Result>(executor, query)
    : await queryRows<Result>(executor, query);
  if (result === undefined) throw new Error('the upsert answered no row');
  const clashRows = JSON.parse(String(result.clashes)) as Array<{
    raw_id: number;
    ledger_hash: string;
    /** Written by the statement (`CLASH_REASON`). */
    reason: string;
  }>;
  const byRawId = new Map(input.records.map((r) => [r.row.raw_id, r]));
  const clashes = clashRows.map((c) => {
    const record = byRawId.get(Number(c.raw_id));
    return {
      reason: c.reason,
      raw: JSON.stringify(record?.row ?? c),
      rawId: Number(c.raw_id),
      ledgerHash: c.ledger_hash,
    };
  });
  const inserted = Number(result.inserted);
  const written = Number(result.written);
  const conflicted = (JSON.parse(String(result.kept_conflicts)) as unknown[]).map(Number);
  return {
    fenced: Number(result.fenced) > 0,
    inserted,
    updated: written - inserted,
    unchanged: input.records.length - clashes.length - written - conflicted.length,
    conflicts: Number(result.conflicts),
    conflicted,
    clashes,
  };
}
