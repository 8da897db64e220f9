/** How each stream's lists were last read, for `status`: its latest run, and the dialect kept per service. */
import { sql } from 'drizzle-orm';
import { type Executor, queryRows, toDate } from '../rows.js';

/** A stream's latest run, and the dialect of the latest run that recorded one. */
export interface StreamLastRun {
  /** Pages the latest run committed (by key, one a request answered). */
  pages: number;
  /** `running`, `ok`, `stopped` or `error`. */
  outcome: string;
  finishedAt: Date | null;
  /** The latest run's dialect, or else that of the latest of its last few runs that recorded one (a run records it when it ends well); null when none did. */
  paging: 'key' | 'page' | null;
  /** By key, the records asked a request (see `sync_runs.key_count`). */
  keyCount: number | null;
}

/** Runs looked through for the latest recorded dialect. */
const RECENT_RUNS = 20;

/** The latest run of every stream that has one, by stream key. */
export async function readLastRuns(executor: Executor): Promise<Map<string, StreamLastRun>> {
  const rows = await queryRows<Record<string, unknown>>(
    executor,
    // Through the (stream_key, fence) index; the dialect is looked for among the last few runs only.
    sql`
    SELECT s.key AS stream_key, r.pages, r.outcome, r.finished_at, p.paging, p.key_count
    FROM sync_streams s
    JOIN LATERAL (
      SELECT pages, outcome, finished_at FROM sync_runs WHERE stream_key = s.key ORDER BY fence DESC LIMIT 1
    ) r ON true
    LEFT JOIN LATERAL (
      SELECT paging, key_count FROM (
        SELECT fence, paging, key_count FROM sync_runs WHERE stream_key = s.key ORDER BY fence DESC LIMIT ${RECENT_RUNS}::int
      ) recent WHERE paging IS NOT NULL ORDER BY fence DESC LIMIT 1
    ) p ON true
    `,
  );
  return new Map(
    rows.map((r) => [
      String(r['stream_key']),
      {
        pages: Number(r['pages']),
        outcome: String(r['outcome']),
        finishedAt: toDate(r['finished_at']),
        paging: r['paging'] === 'key' || r['paging'] === 'page' ? r['paging'] : null,
        keyCount: r['key_count'] === null ? null : Number(r['key_count']),
      },
    ]),
  );
}

/** The dialect kept for a list address (`service_dialects`, password hidden); null when none is. */
export async function readKeptDialect(executor: Executor, listUrl: string): Promise<'key' | 'page' | null> {
  const rows = await queryRows<{ paging: string }>(
    executor,
    sql`SELECT paging FROM service_dialects WHERE list_url = ${listUrl}`,
  );
  const paging = rows[0]?.paging;
  return paging === 'key' || paging === 'page' ? paging : null;
}
