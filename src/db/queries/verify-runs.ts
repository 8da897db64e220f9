/** The `verify_runs` table: each completeness report's time and outcome, for the status page. */
import { sql } from 'drizzle-orm';
import { type Executor, queryRows, toDate } from '../rows.js';

/** What one `verify` found, in counts (stored as `summary`). */
export interface VerifySummary {
  streams: number;
  /** The streams whose report was not complete, by key. */
  incompleteStreams: string[];
  /** What was wrong with each incomplete stream, one line each (absent from older runs). */
  streamProblems?: Record<string, string[]> | undefined;
  conflicts: number;
  /** Stored records not what their sender signed. */
  integrityMismatches: number;
  /** Accounts and tokens whose balance differed; `null` when `--balances` was not asked. */
  balanceDifferences: number | null;
}

/** One stored `verify` run. */
export interface VerifyRun {
  startedAt: Date;
  finishedAt: Date;
  complete: boolean;
  summary: VerifySummary;
}

/** Stores one finished `verify` report. */
export async function insertVerifyRun(executor: Executor, run: VerifyRun): Promise<void> {
  await executor.execute(
    sql`INSERT INTO verify_runs (started_at, finished_at, complete, summary)
        VALUES (${run.startedAt.toISOString()}::timestamptz, ${run.finishedAt.toISOString()}::timestamptz,
                ${run.complete}, ${JSON.stringify(run.summary)}::jsonb)`,
  );
}

/** The latest `verify` run, `null` when none was stored. */
export async function readLastVerifyRun(executor: Executor): Promise<VerifyRun | null> {
  const [row] = await queryRows<{
    started_at: unknown;
    finished_at: unknown;
    complete: boolean;
    summary: unknown;
  }>(
    executor,
    sql`SELECT started_at, finished_at, complete, summary::text AS summary
        FROM verify_runs ORDER BY finished_at DESC, id DESC LIMIT 1`,
  );
  if (row === undefined) return null;
  return {
    startedAt: toDate(row.started_at) ?? new Date(0),
    finishedAt: toDate(row.finished_at) ?? new Date(0),
    complete: row.complete === true,
    summary: JSON.parse(String(row.summary)) as VerifySummary,
  };
}
