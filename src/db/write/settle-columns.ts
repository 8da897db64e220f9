/** The stream's settling columns (`sync_streams.settled_raw_id` and its pending head), as SQL. */
import { type SQL, sql } from 'drizzle-orm';

import type { SettleState } from '../../sync/ports/sync-store.js';

/** The settling columns a walk's last commit (or a proven backfill) writes; nothing when it leaves them. */
export function settleAssignments(settle: SettleState | undefined): SQL {
  if (settle === undefined) return sql``;
  const pendingAt = settle.pending === null ? null : new Date(settle.pending.at).toISOString();
  return sql`
        settled_raw_id = ${settle.settled}::bigint,
        settle_pending_raw_id = ${settle.pending?.rawId ?? null}::bigint,
        settle_pending_at = ${pendingAt}::timestamptz,`;
}
