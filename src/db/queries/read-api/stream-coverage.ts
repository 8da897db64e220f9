/** What `sync_streams` says of the streams that could answer a read: backfilled or not, and how fresh. */
import { sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../rows.js';
import { textArray } from '../../text-array.js';

/** A stream's coverage: its watermark (null until backfilled) and the sightings of the service's head. */
export interface StreamCoverage {
  key: string;
  watermark: number | null;
  headRawId: number | null;
  headSeenAt: Date | null;
  lastSuccessAt: Date | null;
}

/** The streams of these keys that exist. */
export async function selectStreamCoverage(db: Executor, keys: readonly string[]): Promise<StreamCoverage[]> {
  const rows = await queryRows<Record<string, unknown>>(
    db,
    sql`SELECT ${COVERAGE_SELECT} FROM sync_streams s WHERE s.key = ANY (${textArray([...keys])}::text[])`,
  );
  return rows.map(streamCoverage);
}

/**
 * The columns of a stream's coverage, for `FROM sync_streams s`: named apart from every column of
 * a record, so a statement may select both.
 */
export const COVERAGE_SELECT = sql.raw(
  `s.key, s.watermark::text AS watermark, s.head_raw_id::text AS head_raw_id, s.head_seen_at, s.last_success_at`,
);

/** A row holding {@link COVERAGE_SELECT}'s columns as a stream's coverage. */
export function streamCoverage(r: Record<string, unknown>): StreamCoverage {
  return {
    key: String(r['key']),
    watermark: r['watermark'] === null ? null : Number(r['watermark']),
    headRawId: r['head_raw_id'] === null ? null : Number(r['head_raw_id']),
    headSeenAt: toDate(r['head_seen_at']),
    lastSuccessAt: toDate(r['last_success_at']),
  };
}

function toDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  return value instanceof Date ? value : new Date(String(value));
}
