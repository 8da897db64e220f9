/**
 * When the mirror can answer a read truthfully, and how fresh the answer is. Pure.
 *
 * A list is answerable when a stream that holds it is backfilled (has a watermark): the global
 * list `txs` holds every record, so once it is backfilled every list (any account, any filter)
 * is; else the account's own unfiltered stream holds every list of that account; else a stream
 * with exactly the request's account and filters. Look-ups and balances need the global list.
 * Records past the watermark may already be stored (a tail in progress): the freshness headers
 * say how far behind the service the answering stream is.
 */
import type { StreamCoverage } from '../../db/queries/read-api/stream-coverage.js';
import { streamKey } from '../../domain/stream-key.js';
import { lagRawIds } from '../status/stream-head.js';

/** The global list's stream key. */
export const GLOBAL_STREAM = streamKey({});

/** What a read is about: an account and the service's filters as asked (`undefined`: none). */
export interface CoverageNeed {
  account?: string | undefined;
  tokenTag?: string | undefined;
  action?: string | undefined;
  withoutAction?: string | undefined;
  /** Only the global list will do (look-ups, balances). */
  globalOnly?: boolean | undefined;
}

/** The stream keys that could answer, best first. */
export function coveringKeys(need: CoverageNeed): string[] {
  if (need.globalOnly === true || need.account === undefined) {
    const exact = need.globalOnly === true ? GLOBAL_STREAM : streamKey(filtersOf(need));
    return exact === GLOBAL_STREAM ? [GLOBAL_STREAM] : [GLOBAL_STREAM, exact];
  }
  const own = streamKey({ account: need.account });
  const exact = streamKey({ account: need.account, ...filtersOf(need) });
  return exact === own ? [GLOBAL_STREAM, own] : [GLOBAL_STREAM, own, exact];
}

function filtersOf(need: CoverageNeed) {
  return {
    ...(need.tokenTag ? { tokenTag: need.tokenTag } : {}),
    ...(need.action ? { action: need.action } : {}),
    ...(need.withoutAction ? { withoutAction: need.withoutAction } : {}),
  };
}

/** The first of `keys` whose stream is backfilled, or undefined: the read must be refused. */
export function answeringStream(
  keys: readonly string[],
  streams: readonly StreamCoverage[],
): StreamCoverage | undefined {
  for (const key of keys) {
    const stream = streams.find((s) => s.key === key);
    if (stream !== undefined && stream.watermark !== null) return stream;
  }
  return undefined;
}

/**
 * The rawId up to which `stream` is known complete: its watermark. Records above it may be
 * stored with gaps that are filled later (a tail in progress): a client following the list by
 * cursor would skip them for good, so answers stop here. (A record the service shows late, below
 * records it listed before, reaches the mirror's clients as it reaches the service's.)
 */
export function completeUpTo(stream: StreamCoverage): number | null {
  return stream.watermark;
}

/**
 * The freshness headers of an answer from `stream`: `X-Mirror-Watermark` (the answer holds the
 * stream's records up to this rawId, {@link completeUpTo}), `X-Mirror-Lag-Raw-Ids` (the service's head as last seen
 * minus the watermark) and `X-Mirror-Lag-Ms` (milliseconds since the mirror was last known to
 * hold the service's whole list: its last successful sync, or a later sighting of the head at or
 * below the watermark). A value never seen is left out.
 */
export function freshnessHeaders(stream: StreamCoverage, now: Date): Record<string, string> {
  const headers: Record<string, string> = {};
  const upTo = completeUpTo(stream);
  if (upTo !== null) headers['x-mirror-watermark'] = String(upTo);
  const lag = lagRawIds(stream.headRawId, upTo);
  if (lag !== null) headers['x-mirror-lag-raw-ids'] = String(lag);
  const caughtUp = caughtUpAt(stream);
  if (caughtUp !== null) headers['x-mirror-lag-ms'] = String(Math.max(now.getTime() - caughtUp.getTime(), 0));
  return headers;
}

function caughtUpAt(stream: StreamCoverage): Date | null {
  const { lastSuccessAt, headSeenAt, headRawId, watermark } = stream;
  const headHeld = headSeenAt !== null && headRawId !== null && watermark !== null && headRawId <= watermark;
  if (!headHeld) return lastSuccessAt;
  return lastSuccessAt === null || headSeenAt > lastSuccessAt ? headSeenAt : lastSuccessAt;
}
