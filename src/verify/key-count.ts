/**
 * Whether a table holds every record a list shows at or below a rawId, read by key (the deployed
 * dialect): the list read ascending from the bottom, each answer proving the span of rawIds from
 * the cursor it was asked after to its last (the source by key judges it, `src/sync/key-source.ts`),
 * so consecutive answers leave no room for a record between them (arrivals only take rawIds above
 * every record). The answers may be read many at once, in ranges, but come here in order, and
 * each is compared with the table's records of the same span as it comes, so memory holds the
 * answers read ahead and the first names found, whatever the list's length. Given its reads and
 * its table comparisons as functions.
 */

import { withoutRepeatedKeyless } from '../domain/keyless-repeats.js';
import type { LedgerTx, RejectedRecord, TxKeyPage } from '../domain/model.js';
import { pageSlots } from '../domain/page-links.js';
import type { RawIdRange } from '../domain/raw-id-ranges.js';
import { MalformedResponseError } from '../errors.js';
import type { ListCount } from './list-count.js';

/** A span of the list, `(above, atOrBelow]`, with what the service listed in it. */
export interface KeySpan {
  /** Exclusive lower bound; null: from the bottom. */
  above: number | null;
  atOrBelow: number;
  /** Valid records the service listed in the span. */
  records: readonly LedgerTx[];
  /** Readable rawIds of records served malformed in the span (a table holds them as rejected). */
  rejectedRawIds: readonly number[];
}

/** The table's side of one span. */
export interface SpanComparison {
  /** Records of the list the table holds in the span (stored, or set aside as rejected). */
  stored: number;
  /** Listed rawIds the table lacks (neither stored nor set aside), ascending. */
  missing: number[];
  /** Records of the list the table holds in the span that the service did not list. */
  extra: { count: number; rawIds: number[] };
  /** Listed records stored with immutable fields different from the ones served. */
  differing: { rawId: number; fields: string[] }[];
}

/** One answer of the list, in the list's order, as the source by key judged it. */
export interface ListedAnswer {
  /** Every rawId from `lo` to `hi` the list holds is in this answer (`hi` Infinity: the list ends with it). */
  proven: RawIdRange;
  /** The answer as served and screened, its records ascending. */
  served: Pick<TxKeyPage, 'txs' | 'rejected'>;
  /** The records it set aside that are the span's, each once (a repeat where two answers meet is the other's). */
  rejected: readonly RejectedRecord[];
}

export interface KeyCountPorts {
  /**
   * The next answer in order, `null` once the list has ended. A list that cannot be read (an
   * empty answer that says more follow, asked again and again) throws `MalformedResponseError`.
   */
  next(): Promise<ListedAnswer | null>;
  compareSpan(span: KeySpan): Promise<SpanComparison>;
}

/** A list's count by key: the figures of {@link ListCount}, and the newest rawId the walk read. */
export interface KeyCount {
  count: ListCount;
  /** The newest rawId listed when the walk ended; null when the list showed none readable. */
  head: number | null;
  /** Readable records listed at or below `upTo`, and above it. */
  walked: { atOrBelow: number; above: number };
}

interface KeyTally {
  stored: number;
  missing: number[];
  missingCount: number;
  extra: number;
  extraRawIds: number[];
  differing: { rawId: number; fields: string[] }[];
  differingCount: number;
  withoutRawIdBelow: number;
  withoutRawIdAbove: number;
  atOrBelow: number;
  above: number;
  top: number | null;
  head: number | null;
}

/**
 * Walks the list by key from the bottom to its end and compares it with the table up to `upTo`:
 * names the first `nameAtMost` (default 20) rawIds listed but missing from the table, held by
 * the table in a walked span but not listed, and listed with other immutable fields; counts
 * every one of them. Records above `upTo` are counted apart (not synced yet).
 */
export async function countListByKey(
  ports: KeyCountPorts,
  options: { upTo: number; nameAtMost?: number; signal?: AbortSignal | undefined },
): Promise<KeyCount> {
  const { upTo } = options;
  const nameAtMost = options.nameAtMost ?? 20;
  const tally: KeyTally = {
    stored: 0,
    missing: [],
    missingCount: 0,
    extra: 0,
    extraRawIds: [],
    differing: [],
    differingCount: 0,
    withoutRawIdBelow: 0,
    withoutRawIdAbove: 0,
    atOrBelow: 0,
    above: 0,
    top: null,
    head: null,
  };
  // The span compared last ended here (exclusive lower bound of the next); null: none yet.
  let spanEnd: number | null = null;
  let spanClosed = false;
  const compare = async (span: KeySpan) => {
    if (spanClosed || upTo < 0 || (span.above !== null && span.atOrBelow <= span.above)) return;
    addSpan(tally, await ports.compareSpan(span), nameAtMost);
    spanEnd = span.atOrBelow;
    if (span.atOrBelow >= upTo) spanClosed = true;
  };
  let requests = 0;
  let unsettled: string | null = null;
  // Keyless records the answer before counted after its last record at or below its top.
  let trailing: ReadonlySet<string> = new Set();
  for (;;) {
    options.signal?.throwIfAborted();
    let listed: ListedAnswer | null;
    try {
      listed = await ports.next();
    } catch (error) {
      if (!(error instanceof MalformedResponseError)) throw error;
      unsettled = error.message;
      break;
    }
    if (listed === null) break;
    requests += 1;
    const { lo, hi } = listed.proven;
    const inSpan = (id: number) => id >= lo && id <= hi;
    const records = listed.served.txs.filter((tx) => inSpan(tx.rawId));
    const rejectedRawIds = listed.rejected
      .map((r) => r.rawId)
      .filter((id): id is number => id !== undefined && Number.isSafeInteger(id) && inSpan(id));
    const ids = [...records.map((tx) => tx.rawId), ...rejectedRawIds];
    // A keyless record at the meeting of two ranges is counted once (within a range the source
    // drops such repeats itself, and `trailing` meets nothing).
    const counted = { ...listed, rejected: withoutRepeatedKeyless(listed.served, trailing, listed.rejected) };
    countUnkeyable(tally, counted, upTo);
    trailing = keylessAfterTop(listed);
    const below = ids.filter((id) => id <= upTo);
    tally.atOrBelow += below.length;
    tally.above += ids.length - below.length;
    if (below.length > 0) tally.top = Math.max(tally.top ?? -1, ...below);
    if (ids.length > 0) tally.head = Math.max(tally.head ?? -1, ...ids);
    // The span compared last ends here; a span without records is compared with the next.
    const crossed = hi >= upTo;
    if (below.length > 0 || crossed) {
      await compare({
        above: spanEnd,
        atOrBelow: crossed ? upTo : Math.max(...below),
        records: records.filter((tx) => tx.rawId <= upTo),
        rejectedRawIds: rejectedRawIds.filter((id) => id <= upTo),
      });
    }
  }
  return result(tally, { upTo, requests, unsettled, nameAtMost });
}

function result(
  tally: KeyTally,
  options: { upTo: number; requests: number; unsettled: string | null; nameAtMost: number },
): KeyCount {
  const { nameAtMost } = options;
  return {
    count: {
      upTo: options.upTo,
      top: tally.top,
      listed: tally.atOrBelow + tally.withoutRawIdBelow,
      stored: tally.stored,
      above: tally.above + tally.withoutRawIdAbove,
      missing: { count: tally.missingCount, rawIds: tally.missing.slice(0, nameAtMost) },
      withoutRawId: tally.withoutRawIdBelow,
      extra: tally.extra,
      extraRawIds: tally.extraRawIds.slice(0, nameAtMost),
      differing: { count: tally.differingCount, records: tally.differing.slice(0, nameAtMost) },
      unsettled: options.unsettled,
      requests: options.requests,
    },
    head: tally.head,
    walked: { atOrBelow: tally.atOrBelow, above: tally.above },
  };
}

/** Adds one span's comparison, keeping the first names of each kind. */
function addSpan(tally: KeyTally, span: SpanComparison, nameAtMost: number): void {
  tally.stored += span.stored;
  tally.missingCount += span.missing.length;
  tally.missing.push(...span.missing.slice(0, Math.max(0, nameAtMost - tally.missing.length)));
  tally.extra += span.extra.count;
  tally.extraRawIds.push(...span.extra.rawIds.slice(0, Math.max(0, nameAtMost - tally.extraRawIds.length)));
  tally.differingCount += span.differing.length;
  tally.differing.push(...span.differing.slice(0, Math.max(0, nameAtMost - tally.differing.length)));
}

/**
 * The records an answer set aside without a readable rawId that are its span's, placed by their
 * neighbours in the answer: at or below `upTo` when the next readable record is, or (none after
 * it) when the one before it (or the span's start) lies below `upTo`; above it otherwise.
 */
function countUnkeyable(tally: KeyTally, listed: ListedAnswer, upTo: number): void {
  const keyless = new Set(
    listed.rejected.filter((r) => r.rawId === undefined || !Number.isSafeInteger(r.rawId)),
  );
  if (keyless.size === 0) return;
  // The answer's records in the order served, each keyless one with its place.
  const slots = pageSlots(listed.served);
  const placed = new Map<number, RejectedRecord>();
  for (const r of listed.served.rejected) if (keyless.has(r) && r.index !== undefined) placed.set(r.index, r);
  let before = listed.proven.lo - 1;
  let counted = 0;
  const place = (next: number | undefined): void => {
    const below = next !== undefined ? next <= upTo : before < upTo;
    if (below) tally.withoutRawIdBelow += 1;
    else tally.withoutRawIdAbove += 1;
    counted++;
  };
  slots.forEach((id, i) => {
    if (id !== null) {
      before = id;
      return;
    }
    if (!placed.has(i)) return;
    place(slots.slice(i + 1).find((s): s is number => s !== null));
  });
  // Those whose place in the answer is not known: by the span's start.
  for (let left = keyless.size - counted; left > 0; left--) {
    before = listed.proven.lo - 1;
    place(undefined);
  }
}

/** Whether a set-aside record has no readable rawId. */
const isKeyless = (r: RejectedRecord): boolean => r.rawId === undefined || !Number.isSafeInteger(r.rawId);

/**
 * The raw texts of the keyless records `listed` serves between its last record at or below its
 * top and its first above it: a range whose top falls between two records reads on to the first
 * record above it and counts the keyless records before that one (in this answer, or in one
 * before it), and the range above, asked after the top, lists those of them whose place is above
 * the top again, first. Empty when no record above the top was served (the range ended on a
 * record at its top: what follows is the range above's).
 */
function keylessAfterTop(listed: ListedAnswer): ReadonlySet<string> {
  const { served, proven } = listed;
  if (!served.rejected.some(isKeyless)) return new Set();
  const slots = pageSlots(served);
  const firstAbove = slots.findIndex((id) => id !== null && id > proven.hi);
  if (firstAbove < 0) return new Set();
  let lastAtOrBelow = -1;
  slots.forEach((id, i) => {
    if (id !== null && id <= proven.hi) lastAtOrBelow = i;
  });
  return new Set(
    served.rejected
      .filter((r) => isKeyless(r) && r.index !== undefined && r.index > lastAtOrBelow && r.index < firstAbove)
      .map((r) => r.raw),
  );
}
