import { sql } from 'drizzle-orm';
import type { StoredGap, SyncStore } from '../../sync/ports/sync-store.js';
import type { Database } from '../connect.js';
import { queryRows } from '../rows.js';

/**
 * The gaps between stored records of the global list in a span of rawIds (see
 * `SyncStore.storedGaps`): every record is in the global list, so two stored rawIds with none
 * stored between them are where a record shown late can still appear. Read by key; the span is a
 * tail's few seconds of arrivals.
 */
export function createStoredGaps(database: Database): Pick<SyncStore, 'storedGaps'> {
  return {
    async storedGaps({ above, upTo, rankUpTo, limit }) {
      const [bounds] = await queryRows<{ low: string | null; top: string | null; next: string | null }>(
        database.db,
        sql`SELECT
              (SELECT max(raw_id) FROM ledger_transactions WHERE raw_id <= ${above}::bigint)::text AS low,
              (SELECT max(raw_id) FROM ledger_transactions WHERE raw_id <= ${upTo}::bigint)::text AS top,
              (SELECT min(raw_id) FROM ledger_transactions WHERE raw_id > ${upTo}::bigint)::text AS next`,
      );
      if (bounds?.low == null) return null;
      // The span's upper side: the record stored at `upTo`, else the first one above it.
      const high = bounds.top !== null && Number(bounds.top) === upTo ? upTo : bounds.next;
      if (high === null) return null;
      const rows = await queryRows<{ above: string; below: string; rank: string }>(
        database.db,
        sql`SELECT s.raw_id::text AS above, s.below::text AS below,
              (SELECT count(*) FROM ledger_transactions n
                WHERE n.raw_id > s.raw_id AND n.raw_id <= ${rankUpTo}::bigint)::text AS rank
            FROM (
              SELECT raw_id, lead(raw_id) OVER (ORDER BY raw_id DESC) AS below
              FROM ledger_transactions
              WHERE raw_id >= ${bounds.low}::bigint AND raw_id <= ${high}::bigint
            ) s
            WHERE s.below IS NOT NULL AND s.raw_id - s.below > 1
            ORDER BY s.raw_id DESC
            LIMIT ${limit + 1}::int`,
      );
      if (rows.length > limit) return null;
      return rows.map(
        (r): StoredGap => ({ above: Number(r.above), below: Number(r.below), rank: Number(r.rank) }),
      );
    },
  };
}
