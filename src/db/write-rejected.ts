import { createHash } from 'node:crypto';
import { sql } from 'drizzle-orm';
import type { RejectedRecord } from '../client/types.js';
import { toStorableText } from './encode.js';
import type { Executor } from './rows.js';

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
  const byFingerprint = new Map<string, Record<string, unknown>>();
  for (const record of input.rejected) {
    const reason = toStorableText(record.reason);
    const raw = toStorableText(record.raw);
    const fingerprint = createHash('sha256').update(reason).update('\n').update(raw).digest('hex');
    const seen = byFingerprint.get(fingerprint);
    if (seen) {
      seen['seen_count'] = Number(seen['seen_count']) + 1;
      continue;
    }
    byFingerprint.set(fingerprint, {
      fingerprint,
      seen_count: 1,
      reason,
      raw_text: raw,
      raw_id: record.rawId !== undefined && Number.isSafeInteger(record.rawId) ? record.rawId : null,
      ledger_hash: record.ledgerHash === undefined ? null : toStorableText(record.ledgerHash),
    });
  }
  const rows = JSON.stringify([...byFingerprint.values()]);
  const now = input.now.toISOString();
  await executor.execute(sql`
    INSERT INTO rejected_records
      (fingerprint, stream_key, page, reason, raw_text, raw_id, ledger_hash, first_seen_at, seen_at, seen_count)
    SELECT r.fingerprint, ${input.streamKey}::text, ${input.page}::int, r.reason, r.raw_text, r.raw_id, r.ledger_hash,
           ${now}::timestamptz, ${now}::timestamptz, r.seen_count
    FROM json_to_recordset(${rows}::json)
      AS r(fingerprint text, seen_count integer, reason text, raw_text text, raw_id bigint, ledger_hash text)
    ORDER BY r.fingerprint
    ON CONFLICT (fingerprint) DO UPDATE SET
      seen_at = excluded.seen_at,
      seen_count = rejected_records.seen_count + excluded.seen_count,
      stream_key = coalesce(excluded.stream_key, rejected_records.stream_key),
      page = coalesce(excluded.page, rejected_records.page)
  `);
}
