import { sql } from 'drizzle-orm';
import type { Executor } from './rows.js';
import { queryOne, queryRows } from './rows.js';
import {
  countNonFinal,
  countRejected,
  listStreams,
  maxStoredRawId,
  type NonFinalCounts,
  type StreamStatus,
} from './stream-queries.js';

/** The database side of `status`: every stream with its rejected count, and the totals. */
export interface SyncStatus {
  streams: Array<StreamStatus & { rejected: number }>;
  /** Records stored. */
  records: number;
  /** The newest rawId stored, `null` when none is. */
  newestRawId: number | null;
  nonFinal: NonFinalCounts;
  /** Distinct rejected records over all streams and re-reads. */
  rejected: number;
}

/** Reads what `status` reports from the database (no request to the service). */
export async function readSyncStatus(executor: Executor, now: Date = new Date()): Promise<SyncStatus> {
  const streams = await listStreams(executor);
  const rejectedByStream = await queryRows<{ stream_key: string; rejected: number }>(
    executor,
    sql`SELECT stream_key, count(*)::int AS rejected FROM rejected_records WHERE stream_key IS NOT NULL GROUP BY stream_key`,
  );
  const perStream = new Map(rejectedByStream.map((r) => [r.stream_key, Number(r.rejected)]));
  const { records } = await queryOne<{ records: string }>(
    executor,
    sql`SELECT count(*)::text AS records FROM ledger_transactions`,
  );
  return {
    streams: streams.map((stream) => ({ ...stream, rejected: perStream.get(stream.key) ?? 0 })),
    records: Number(records),
    newestRawId: await maxStoredRawId(executor),
    nonFinal: await countNonFinal(executor, now),
    rejected: (await countRejected(executor)).distinct,
  };
}
