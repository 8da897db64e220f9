/**
 * How far a stream is behind the service: the newest rawId the service was seen to list for it
 * (its head) minus the watermark. Pure: the sightings come from the database and the probe.
 */

import type { StreamStatus } from '../../db/queries/stream-queries.js';
import { asPageCheckpoint } from '../../domain/checkpoints.js';

/** A stream's head at the service as last seen, and when; both null before any sighting. */
export interface KnownHead {
  rawId: number | null;
  seenAt: Date | null;
}

/**
 * The newest of the head stored with the stream, a sighting just made (`live`, the probe of
 * `status`), and the head a walk or a parallel backfill in progress aims at (seen when it began,
 * so never newer than the stored one once that walk wrote page 1).
 */
export function knownHead(
  stream: Pick<StreamStatus, 'headRawId' | 'headSeenAt' | 'walk'>,
  others: { backfillHead?: number | null | undefined; live?: KnownHead | undefined } = {},
): KnownHead {
  let head: KnownHead = { rawId: stream.headRawId, seenAt: stream.headSeenAt };
  const consider = (rawId: number | null | undefined, seenAt: Date | null) => {
    if (rawId === null || rawId === undefined) return;
    if (head.rawId === null || rawId > head.rawId) head = { rawId, seenAt };
    else if (rawId === head.rawId && seenAt !== null && (head.seenAt === null || seenAt > head.seenAt))
      head = { rawId, seenAt };
  };
  consider(asPageCheckpoint(stream.walk)?.headRawId, null);
  consider(others.backfillHead, null);
  consider(others.live?.rawId, others.live?.seenAt ?? null);
  return head;
}

/**
 * RawIds the stream is behind: head − watermark (a stream without a watermark is behind by every
 * rawId up to the head), never below 0; null when no head was ever seen.
 */
export function lagRawIds(head: number | null, watermark: number | null): number | null {
  if (head === null) return null;
  return Math.max(head - (watermark ?? -1), 0);
}

/** Seconds since the head was seen, at `now`; null when it never was. */
export function headAgeSeconds(head: KnownHead, now: Date): number | null {
  return head.seenAt === null ? null : Math.max((now.getTime() - head.seenAt.getTime()) / 1000, 0);
}
