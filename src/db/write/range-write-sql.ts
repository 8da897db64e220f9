/** The range write: a parallel backfill's pages committed with the ranges they prove. */
import { type SQL, sql } from 'drizzle-orm';

/**
 * The update that extends the stream lease a parallel backfill holds while its ranges make
 * progress, once a third of it has passed (`at`: the commit's time, ISO). Extended by every range
 * commit, the stream's one row would stay locked by each commit until it ends, and the other
 * workers' commits would queue behind it.
 */
export function backfillLeaseRenewal(input: { key: string; owner: string; at: string }): SQL {
  const { at } = input;
  return sql`
    UPDATE sync_streams SET
      lease_expires_at = greatest(lease_expires_at, ${at}::timestamptz + lease_ms * interval '1 millisecond')
    WHERE key = ${input.key} AND lease_owner = ${input.owner} AND lease_ms IS NOT NULL
      AND lease_expires_at < ${at}::timestamptz + lease_ms * interval '1 millisecond' * 2 / 3`;
}
