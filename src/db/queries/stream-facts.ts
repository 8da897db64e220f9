/** Read-only facts about each stream for readiness and the state metrics: plain queries, no state. */
import { sql } from 'drizzle-orm';
import { type Executor, queryRows, toDate, toNumber } from '../rows.js';

/** The latest parallel backfill of a stream, as `backfill_runs` holds it. */
export interface LatestBackfill {
  id: string;
  status: 'running' | 'done' | 'failed';
  /** A catch-up's floor (it proves the stretch above it); `null` for a first backfill. */
  floor: number | null;
  error: string | null;
  round: number;
  headRawId: number;
  finishedAt: Date | null;
}

/** What readiness and the gauges need beyond `readSyncStatus`, per stream key. */
export interface StreamFacts {
  latestBackfill: LatestBackfill | null;
  /** When the record at the watermark was made (ledger time, else first sight); null without one. */
  watermarkTime: Date | null;
}

/** The facts of every stream, by key (streams without any are left out). */
export async function readStreamFacts(executor: Executor): Promise<Map<string, StreamFacts>> {
  const runs = await queryRows<Record<string, unknown>>(
    executor,
    sql`SELECT DISTINCT ON (stream_key) stream_key, id, status, floor_raw_id::text AS floor, error, round,
               head_raw_id::text AS head_raw_id, finished_at
        FROM backfill_runs ORDER BY stream_key, created_at DESC`,
  );
  const times = await queryRows<{ key: string; at: unknown }>(
    executor,
    sql`SELECT s.key, coalesce(t.ledger_time, t.first_seen_at) AS at
        FROM sync_streams s JOIN ledger_transactions t ON t.raw_id = s.watermark`,
  );
  const facts = new Map<string, StreamFacts>();
  const entry = (key: string): StreamFacts => {
    let found = facts.get(key);
    if (found === undefined) {
      found = { latestBackfill: null, watermarkTime: null };
      facts.set(key, found);
    }
    return found;
  };
  for (const row of runs) {
    entry(String(row['stream_key'])).latestBackfill = {
      id: String(row['id']),
      status: String(row['status']) as LatestBackfill['status'],
      floor: toNumber(row['floor']),
      error: (row['error'] as string | null) ?? null,
      round: Number(row['round']),
      headRawId: toNumber(row['head_raw_id']) ?? 0,
      finishedAt: toDate(row['finished_at']),
    };
  }
  for (const row of times) entry(row.key).watermarkTime = toDate(row.at);
  return facts;
}
