/**
 * A tail by key that begins at the head: one request for the newest records of the stream,
 * newest first (`order=desc`, no cursor). When that answer reaches down to the settled mark, it
 * is the whole tail; and it carries, besides the new records, the records stored just below the
 * watermark, which are the ones waiting for a status change: the tail re-reads them with the
 * same request, where a re-read after the walk would ask again. When it does not reach the mark
 * (more records arrived than it holds, or the server answered fewer), the walk reads ascending
 * from the mark as usual and stops once it reaches the head answer's lowest record.
 */
import type { LedgerTx, RejectedRecord } from '../../domain/model.js';
import type { StreamSpec } from '../../domain/stream-key.js';
import type { FetchKeyPage } from '../ports/fetches.js';
import type { RawIdScreen } from '../raw-id-screen.js';
import { openGapLow, settleMarks } from '../settle.js';

/** The head answer, judged. */
export interface KeyHead {
  records: LedgerTx[];
  rejected: RejectedRecord[];
  /** The answer holds every record above `from`: the tail needs nothing more. */
  reaches: boolean;
  /**
   * Where an ascending read from `from` joins it: its lowest rawId; `null` when it cannot be
   * joined (not newest first, or below the watermark: not the head of this stream).
   */
  join: number | null;
  /** The lowest rawId above `from` missing from the answer that may still fill in. */
  openGap: number | undefined;
  /** When it was requested (ms). */
  readAt: number;
}

/**
 * Reads and judges the head of `spec`. `from` is where the tail stops (the settled mark), and
 * `watermark` the newest rawId stored: an answer whose newest record lies below it, or that is
 * not newest first (a server that ignores `order`), is not the head, and is only stored.
 */
export async function readKeyHead(input: {
  fetchKeyPage: FetchKeyPage;
  /** The walk's screen: records the service does not vouch for are set aside. */
  screen: RawIdScreen;
  spec: StreamSpec;
  count: number | undefined;
  from: number;
  watermark: number | null;
  windowMs: number;
  floor: number | null;
  now: () => number;
}): Promise<KeyHead> {
  const { from } = input;
  const readAt = input.now();
  const answer = await input.fetchKeyPage(input.spec, { cursor: 0, count: input.count, order: 'desc' });
  // Screened in the order most of its records follow (a server may ignore `order`), so a lone
  // record out of order is set aside rather than taken for the order.
  const falling = answer.txs.filter((tx, i) => i > 0 && tx.rawId < answer.txs[i - 1]!.rawId).length;
  const order = falling * 2 >= answer.txs.length - 1 ? 'desc' : 'asc';
  const served = await input.screen.screen(answer, { after: from, order });
  const newestFirst = served.txs.every((tx, i) => i === 0 || tx.rawId < served.txs[i - 1]!.rawId);
  const marks = settleMarks(served);
  const ids = marks.map((m) => m.rawId);
  const highest = ids.length > 0 ? Math.max(...ids) : null;
  const lowest = ids.length > 0 ? Math.min(...ids) : null;
  const head =
    newestFirst &&
    (highest === null ? !served.hasNextPage : input.watermark === null || highest >= input.watermark);
  const reaches = head && (!served.hasNextPage || (lowest !== null && lowest <= from));
  const above = marks.filter((m) => m.rawId > from);
  // Judged as an ascending read from the mark would: the mark counts as the record below.
  const gap =
    !head || input.windowMs <= 0
      ? null
      : openGapLow({
          records: reaches ? [...above, { rawId: from, timestamp: 0 }] : above,
          above: null,
          readAt,
          headAt: undefined,
          windowMs: input.windowMs,
          floor: input.floor,
        });
  return {
    records: served.txs,
    rejected: served.rejected,
    reaches,
    join: head && !reaches ? lowest : null,
    openGap: gap ?? undefined,
    readAt,
  };
}
