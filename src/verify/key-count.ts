/**
 * Whether a table holds every record a list shows at or below a rawId, read by key (the deployed
 * dialect): the list walked ascending from the bottom, each answer's last rawId the next cursor,
 * so consecutive answers leave no room for a record between them (arrivals only take rawIds above
 * every record). Each answer is compared with the table's records of the same rawId span as it
 * comes, so memory holds one answer and the first names found, whatever the list's length.
 * Given its reads and its table comparisons as functions.
 */

import type { LedgerTx, TxKeyPage } from '../domain/model.js';
import { pageSlots } from '../domain/page-links.js';
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

export interface KeyCountPorts {
  /** The records after `cursor` (exclusive), ascending; a server may answer fewer than asked. */
  fetchAfter(cursor: number): Promise<TxKeyPage>;
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

/** How often an empty answer that says more records follow is asked again. */
const EMPTY_ANSWER_RETRIES = 3;

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
  let cursor = 0;
  let requests = 0;
  let unsettled: string | null = null;
  for (let emptyTries = 0; ; ) {
    options.signal?.throwIfAborted();
    requests += 1;
    const answer = await ports.fetchAfter(cursor);
    const slots = pageSlots(answer).filter((id) => id === null || id > cursor);
    const ids = slots.filter((id): id is number => id !== null);
    if (ids.length === 0 && answer.hasNextPage) {
      if (emptyTries++ < EMPTY_ANSWER_RETRIES) continue;
      unsettled = `an answer after rawId ${cursor} showed no record although more follow`;
      break;
    }
    emptyTries = 0;
    countUnkeyable(tally, slots, { cursor, upTo, last: !answer.hasNextPage });
    const below = ids.filter((id) => id <= upTo);
    tally.atOrBelow += below.length;
    tally.above += ids.length - below.length;
    if (below.length > 0) tally.top = Math.max(tally.top ?? -1, ...below);
    if (ids.length > 0) tally.head = Math.max(tally.head ?? -1, ...ids);
    const crossed = ids.length > below.length || !answer.hasNextPage;
    if (below.length > 0 || crossed) {
      const inSpan = (id: number) => id <= upTo;
      await compare({
        above: spanEnd,
        atOrBelow: crossed ? upTo : Math.max(...below),
        records: answer.txs.filter((tx) => tx.rawId > cursor && inSpan(tx.rawId)),
        rejectedRawIds: answer.rejected
          .map((r) => r.rawId)
          .filter(
            (id): id is number => id !== undefined && Number.isSafeInteger(id) && id > cursor && inSpan(id),
          ),
      });
    }
    if (ids.length > 0) cursor = Math.max(...ids);
    if (!answer.hasNextPage) break;
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
 * Records served without a readable rawId, placed by their neighbours in the ascending answer:
 * at or below `upTo` when the next readable record is, or (none after it) when the one before it
 * (or the cursor) lies below `upTo`; above it otherwise. Those after the answer's last readable
 * record count only in the last answer: the next one, asked after that rawId, lists them again.
 */
function countUnkeyable(
  tally: KeyTally,
  slots: readonly (number | null)[],
  at: { cursor: number; upTo: number; last: boolean },
): void {
  let before = at.cursor;
  slots.forEach((id, i) => {
    if (id !== null) {
      before = id;
      return;
    }
    const next = slots.slice(i + 1).find((s): s is number => s !== null);
    if (next === undefined && !at.last) return;
    const below = next !== undefined ? next <= at.upTo : before < at.upTo;
    if (below) tally.withoutRawIdBelow += 1;
    else tally.withoutRawIdAbove += 1;
  });
}
