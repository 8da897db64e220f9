/** The stream's settling columns (`sync_streams.settled_raw_id` and its pending head), as SQL. */
import { type SQL, sql } from 'drizzle-orm';

import type { SettleHead, SettleState } from '../../sync/ports/sync-store.js';

/** The settling columns a walk's last commit (or a proven backfill) writes; nothing when it leaves them. */
export function settleAssignments(settle: SettleState | undefined): SQL {
  if (settle === undefined) return sql``;
  const pendingAt = settle.pending === null ? null : new Date(settle.pending.at).toISOString();
  const later = settle.pending !== null && settle.later?.length ? JSON.stringify(settle.later) : null;
  return sql`
        settled_raw_id = ${settle.settled}::bigint,
        settle_pending_raw_id = ${settle.pending?.rawId ?? null}::bigint,
        settle_pending_at = ${pendingAt}::timestamptz,
        settle_pending_later = ${later}::jsonb,`;
}

/** The waiting heads after the first, as read from `settle_pending_later` (its text). */
export function parseLaterHeads(text: string | null): SettleHead[] {
  if (text === null) return [];
  const parsed: unknown = JSON.parse(text);
  if (!Array.isArray(parsed)) return [];
  return parsed.flatMap((head: unknown) => {
    const { rawId, at } = (head ?? {}) as { rawId?: unknown; at?: unknown };
    return Number.isSafeInteger(rawId) && Number.isFinite(at)
      ? [{ rawId: rawId as number, at: at as number }]
      : [];
  });
}
