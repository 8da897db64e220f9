import { type SQL, sql } from 'drizzle-orm';
import type { RejectedRecord } from '../../domain/model.js';
import type { Executor } from '../rows.js';
import { toStorableText } from './encode.js';

/**
 * A rejected record's fingerprint, `rejected_records.fingerprint`: sha256 (hex) of its reason, a
 * newline and its raw text, over SQL text expressions. Written here only: the rows a write sets
 * aside before the statement get theirs from the same expression ({@link rejectedSource}).
 */
export function rejectedFingerprint(reason: SQL, rawText: SQL): SQL {
  return sql`encode(sha256(convert_to(${reason} || E'\n' || ${rawText}, 'UTF8')), 'hex')`;
}

/**
 * A `rejected_records` row to write: one per distinct reason and raw text (its fingerprint,
 * {@link rejectedFingerprint}), with its sightings.
 */
export interface RejectedRow {
  seenCount: number;
  reason: string;
  rawText: string;
  rawId: number | null;
  ledgerHash: string | null;
  /** The page that served it, when the rows of several pages are written at once. */
  page?: number | null | undefined;
}

/** Groups rejected records by reason and raw text (pure): the same bad record twice is one row seen twice. */
export function toRejectedRows(rejected: readonly RejectedRecord[]): RejectedRow[] {
  return toPagedRejectedRows(rejected.map((record) => ({ record, page: null })));
}

/**
 * Like {@link toRejectedRows} for the records of several pages, each with its page: a record seen
 * on several pages keeps the last (highest) one, as writing the pages one by one would.
 */
export function toPagedRejectedRows(
  rejected: ReadonlyArray<{ record: RejectedRecord; page: number | null }>,
): RejectedRow[] {
  // Keyed as the fingerprint hashes them: the same key, the same fingerprint.
  const byFingerprint = new Map<string, RejectedRow>();
  for (const { record, page } of rejected) {
    const reason = toStorableText(record.reason);
    const rawText = toStorableText(record.raw);
    const key = `${reason}\n${rawText}`;
    const seen = byFingerprint.get(key);
    if (seen) {
      seen.seenCount += 1;
      if (page !== null && (seen.page === null || seen.page === undefined || page > seen.page))
        seen.page = page;
      continue;
    }
    byFingerprint.set(key, {
      seenCount: 1,
      reason,
      rawText,
      rawId: record.rawId !== undefined && Number.isSafeInteger(record.rawId) ? record.rawId : null,
      ledgerHash: record.ledgerHash === undefined ? null : toStorableText(record.ledgerHash),
      page,
    });
  }
  return [...byFingerprint.values()];
}

/**
 * The rows as a subquery (to alias) with the columns of {@link RejectedRow} in snake_case
 * (`page` null when absent) and their `fingerprint`.
 */
export function rejectedSource(rows: readonly RejectedRow[]): SQL {
  const json = JSON.stringify(
    rows.map((r) => ({
      seen_count: r.seenCount,
      reason: r.reason,
      raw_text: r.rawText,
      raw_id: r.rawId,
      ledger_hash: r.ledgerHash,
      page: r.page ?? null,
    })),
  );
  return sql`(
      SELECT ${rejectedFingerprint(sql`j.reason`, sql`j.raw_text`)} AS fingerprint,
             j.seen_count, j.reason, j.raw_text, j.raw_id, j.ledger_hash, j.page
      FROM json_to_recordset(${json}::json)
        AS j(seen_count integer, reason text, raw_text text, raw_id bigint, ledger_hash text, page integer)
    )`;
}

/**
 * The upsert of rejected rows selected by `source` (columns as in {@link rejectedSource}):
 * seeing a record again bumps `seen_count` and `seen_at` and notes the latest stream and page.
 * `page` is one page for every row, or an expression over `s` (`s.page`) when the rows of
 * several pages are written at once.
 */
export function upsertRejectedSql(input: {
  source: SQL;
  streamKey: string | null;
  page: number | null | SQL;
  now: string;
}): SQL {
  return sql`
    INSERT INTO rejected_records
      (fingerprint, stream_key, stream_keys, page, reason, raw_text, raw_id, ledger_hash, first_seen_at, seen_at, seen_count)
    SELECT s.fingerprint, ${input.streamKey}::text,
           CASE WHEN ${input.streamKey}::text IS NULL THEN '{}'::text[] ELSE ARRAY[${input.streamKey}::text] END,
           ${input.page}::int, s.reason, s.raw_text, s.raw_id, s.ledger_hash,
           ${input.now}::timestamptz, ${input.now}::timestamptz, s.seen_count
    FROM ${input.source}
    ORDER BY s.fingerprint
    ON CONFLICT (fingerprint) DO UPDATE SET
      seen_at = excluded.seen_at,
      seen_count = rejected_records.seen_count + excluded.seen_count,
      stream_key = coalesce(excluded.stream_key, rejected_records.stream_key),
      stream_keys = CASE
        WHEN excluded.stream_key IS NULL OR excluded.stream_key = ANY (rejected_records.stream_keys)
        THEN rejected_records.stream_keys
        ELSE array_append(rejected_records.stream_keys, excluded.stream_key) END,
      page = coalesce(excluded.page, rejected_records.page)`;
}

/**
 * Stores records that could not be stored as transactions, once per distinct reason and raw
 * text: seeing the same bad record again only bumps `seen_count` and `seen_at` (and notes the
 * latest stream and page).
 */
export async function writeRejected(
  executor: Executor,
  input: { rejected: readonly RejectedRecord[]; streamKey: string | null; page: number | null; now: Date },
): Promise<void> {
  if (input.rejected.length === 0) return;
  const source = sql`${rejectedSource(toRejectedRows(input.rejected))} s`;
  await executor.execute(
    upsertRejectedSql({ source, streamKey: input.streamKey, page: input.page, now: input.now.toISOString() }),
  );
}
