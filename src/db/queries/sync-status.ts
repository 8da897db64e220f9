import { sql } from 'drizzle-orm';

import type { StreamSpec } from '../../domain/stream-key.js';
import type { Executor } from '../rows.js';
import { queryOne, queryRows } from '../rows.js';
import { deferredIndexNames } from '../schema/deferred-indexes.js';
import { countConflictsByStream } from './conflicts.js';
import {
  countNonFinal,
  countRejected,
  listStreams,
  maxStoredRawId,
  type NonFinalCounts,
  type StreamStatus,
} from './stream-queries.js';
import { readLastRuns, type StreamLastRun } from './stream-readings.js';

/** The database side of `status`: every stream with its rejected and conflict counts, and the totals. */
export interface SyncStatus {
  streams: Array<
    StreamStatus & { rejected: number; nonFinal: number; conflicts: number; lastRun: StreamLastRun | null }
  >;
  /** Records stored. */
  records: number;
  /** The newest rawId stored, `null` when none is. */
  newestRawId: number | null;
  nonFinal: NonFinalCounts;
  /** Distinct rejected records over all streams and re-reads. */
  rejected: number;
  /**
   * Records served again with immutable fields different from the stored ones (one per distinct
   * served version, over all streams and re-reads); the stored records were kept.
   */
  conflicts: number;
  /**
   * Read-side indexes dropped for a first backfill and not built yet (see
   * `deferred-indexes.ts`): reports run slower until the backfill ends or `migrate` builds them.
   */
  deferredIndexes: string[];
}

/** Reads what `status` reports from the database (no request to the service). */
export async function readSyncStatus(executor: Executor, now: Date = new Date()): Promise<SyncStatus> {
  const streams = await listStreams(executor);
  const rejectedByStream = await queryRows<{ stream_key: string; rejected: number }>(
    executor,
    // Each stream that saw a record (`stream_keys`; `stream_key` for rows older than it).
    sql`SELECT s.key AS stream_key, count(DISTINCT r.fingerprint)::int AS rejected
        FROM rejected_records r CROSS JOIN LATERAL unnest(array_append(r.stream_keys, r.stream_key)) AS s(key)
        WHERE s.key IS NOT NULL GROUP BY s.key`,
  );
  const perStream = new Map(rejectedByStream.map((r) => [r.stream_key, Number(r.rejected)]));
  const conflicts = await countConflictsByStream(executor);
  const lastRuns = await readLastRuns(executor);
  const { records } = await queryOne<{ records: string }>(
    executor,
    sql`SELECT count(*)::text AS records FROM ledger_transactions`,
  );
  const withCounts = [];
  for (const stream of streams) {
    withCounts.push({
      ...stream,
      rejected: perStream.get(stream.key) ?? 0,
      conflicts: conflicts.get(stream.key) ?? 0,
      nonFinal: await countStreamNonFinal(executor, stream.spec),
      lastRun: lastRuns.get(stream.key) ?? null,
    });
  }
  return {
    streams: withCounts,
    records: Number(records),
    newestRawId: await maxStoredRawId(executor),
    nonFinal: await countNonFinal(executor, now),
    rejected: (await countRejected(executor)).distinct,
    conflicts: [...conflicts.values()].reduce((sum, n) => sum + n, 0),
    deferredIndexes: await deferredIndexNames(executor),
  };
}

/** Records of one stream (its account and filters) waiting for a re-read. */
async function countStreamNonFinal(executor: Executor, spec: StreamSpec): Promise<number> {
  const account = spec.account ?? null;
  const { n } = await queryOne<{ n: string }>(
    executor,
    sql`SELECT count(*)::text AS n FROM ledger_tx_rechecks r JOIN ledger_transactions t ON t.raw_id = r.raw_id
        WHERE (${account}::text IS NULL OR lower(t.from_account) = lower(${account}::text)
               OR lower(t.to_account) = lower(${account}::text))
          AND (${spec.tokenTag ?? null}::text IS NULL OR lower(t.token_tag) = lower(${spec.tokenTag ?? null}::text))
          AND (${spec.action ?? null}::text IS NULL OR t.action = ${spec.action ?? null}::text)
          AND (${spec.withoutAction ?? null}::text IS NULL OR t.action <> ${spec.withoutAction ?? null}::text)`,
  );
  return Number(n);
}
