/**
 * The screen every list answer passes before a walk moves on it: a record whose rawId the service
 * itself does not vouch for is set aside, so it can never move a cursor, checkpoint, watermark or
 * proof. A service that lies once (one answer holding a record with rawId 10^15 while its head is
 * near 25,000) would otherwise send every later cursor past the records it lists afterwards.
 *
 * Two rules, judged in the order the list runs (ascending by key; a page newest first is read
 * from its end):
 * - **A jump past the head.** A record more than {@link RAW_ID_JUMP} above the highest rawId known
 *   to be real (the service's head as last read, the walk's cursor, the records before it) is
 *   checked against the service's head: one request (`readHead`), at most one an answer. Above
 *   that head it is set aside; at or below it, taken in (a later answer that shows the head really
 *   is there takes it in normally). Smaller steps are arrivals and cost nothing.
 * - **Out of order.** In a list the service serves in rawId order, a record above the answer's
 *   last one (ascending) or its first one (newest first) is out of order and set aside: the walk
 *   goes on from the answer's end, as the service's own clients do.
 *
 * A record set aside keeps its raw text and its hash in `rejected_records`, but not its rawId: a
 * rawId the service does not vouch for cannot key a record, and a walk treats such a record as it
 * treats one served without a rawId.
 */

import { txPositions } from '../domain/keyless-repeats.js';
import type { LedgerTx, RejectedRecord } from '../domain/model.js';
import { type StreamSpec, streamKey } from '../domain/stream-key.js';
import type { FetchKeyPage, FetchPage } from './ports/fetches.js';
import type { SyncLogger } from './sync-logger.js';

/**
 * The largest step above the highest rawId known to be real that is taken as arrivals without
 * asking the service for its head. A walk's answers move a hundred rawIds at a time; a step of
 * more than ten thousand within one answer is not an arrival on any ledger of this kind.
 */
export const RAW_ID_JUMP = 10_000;

/** An answer as the screen reads and rewrites it. */
export interface ScreenedAnswer {
  txs: LedgerTx[];
  rejected: RejectedRecord[];
}

/** The screen of one walk: it remembers the highest rawId known to be real from answer to answer. */
export interface RawIdScreen {
  /**
   * `answer` with the records the service does not vouch for moved to `rejected` (with the reason
   * and their place, without a rawId). `after`: the cursor the answer was asked after, a rawId
   * known to be real (`null`: the bottom of the list). The same object when nothing is set aside.
   */
  screen<A extends ScreenedAnswer>(
    answer: A,
    read: { after: number | null; order: 'asc' | 'desc' },
  ): Promise<A>;
  /**
   * Whether rawIds served ascending after `after` pass without a head read and without a record
   * set aside: an answer read elsewhere (on the encoding thread) that does not is read again
   * here, through {@link RawIdScreen.screen}.
   */
  passes(rawIds: readonly number[], after: number | null): boolean;
}

/** The reason a record above the service's head is set aside with. */
export function beyondHeadReason(rawId: number): string {
  return `rawId ${rawId} lies beyond the newest record the service lists`;
}

/** The reason a record listed before a lower one is set aside with. */
export function outOfOrderReason(rawId: number): string {
  return `rawId ${rawId} is out of order: listed before records with lower rawIds`;
}

/**
 * The screen of one walk. `readHead`: the service's newest rawId of the stream, now (one
 * request). `onSetAside` hears of each record set aside (a warning in the log).
 */
export function createRawIdScreen(input: {
  readHead: () => Promise<number | null>;
  onSetAside?: ((setAside: { rawId: number; reason: string; head: number | null }) => void) | undefined;
}): RawIdScreen {
  let real = -1;
  let lastHead: number | null = null;
  const ceiling = (after: number | null) => Math.max(real, after ?? -1) + RAW_ID_JUMP;
  return {
    passes(rawIds, after) {
      let limit = after === null && real < 0 ? Math.min(...rawIds) + RAW_ID_JUMP : ceiling(after);
      const last = rawIds.at(-1) ?? -1;
      for (const rawId of rawIds) {
        if (rawId > limit || rawId > last) return false;
        limit = Math.max(limit, rawId + RAW_ID_JUMP);
      }
      if (last > real) real = last;
      return true;
    },
    async screen(answer, read) {
      const entries = keyedEntries(answer);
      if (entries.length === 0) return answer;
      // The list's order, lowest first: a page newest first is judged from its end.
      const ordered = read.order === 'asc' ? entries : [...entries].reverse();
      const reasons = new Map<Entry, string>();
      // Knowing nothing yet (a page read first, the bottom of a list), the answer's lowest rawId
      // is where it starts: only the jumps above it are judged.
      let limit = read.after === null && real < 0 ? lowest(entries) + RAW_ID_JUMP : ceiling(read.after);
      let head: number | null | undefined;
      for (const entry of ordered) {
        if (entry.rawId > limit) {
          if (head === undefined) {
            head = await input.readHead();
            lastHead = head;
            if (head !== null) real = Math.max(real, head);
          }
          if (head === null || entry.rawId > head) {
            reasons.set(entry, beyondHeadReason(entry.rawId));
            continue;
          }
        }
        limit = Math.max(limit, entry.rawId + RAW_ID_JUMP);
      }
      const kept = ordered.filter((entry) => !reasons.has(entry));
      const top = kept.at(-1)?.rawId;
      for (const entry of kept)
        if (top !== undefined && entry.rawId > top) reasons.set(entry, outOfOrderReason(entry.rawId));
      if (top !== undefined && top > real) real = top;
      if (reasons.size === 0) return answer;
      for (const [entry, reason] of reasons)
        input.onSetAside?.({ rawId: entry.rawId, reason, head: lastHead });
      return setAside(answer, reasons);
    },
  };
}

/** The lowest rawId of an answer's records. */
function lowest(entries: readonly Entry[]): number {
  return entries.reduce((low, entry) => Math.min(low, entry.rawId), Number.POSITIVE_INFINITY);
}

/** A record of an answer that carries a rawId: valid (`tx`), or set aside already (`rejected`). */
type Entry = { rawId: number; position: number } & (
  | { tx: LedgerTx; rejected?: undefined }
  | { tx?: undefined; rejected: RejectedRecord }
);

/** The answer's records that carry a rawId, in the order served. */
function keyedEntries(answer: ScreenedAnswer): Entry[] {
  const positions = txPositions(answer);
  const entries: Entry[] = answer.txs.map((tx, i) => ({ rawId: tx.rawId, position: positions[i] ?? i, tx }));
  for (const rejected of answer.rejected) {
    if (rejected.rawId === undefined || !Number.isSafeInteger(rejected.rawId)) continue;
    entries.push({ rawId: rejected.rawId, position: rejected.index ?? Number.POSITIVE_INFINITY, rejected });
  }
  return entries.sort((a, b) => a.position - b.position);
}

/**
 * `answer` with the records in `reasons` set aside without a rawId, at their places: a valid one
 * moved to `rejected`, one set aside already with the reason added.
 */
function setAside<A extends ScreenedAnswer>(answer: A, reasons: ReadonlyMap<Entry, string>): A {
  const moved = new Map<LedgerTx, RejectedRecord>();
  const amended = new Map<RejectedRecord, RejectedRecord>();
  for (const [entry, reason] of reasons) {
    if (entry.tx !== undefined) {
      const { tx } = entry;
      moved.set(tx, {
        reason,
        raw: wireText(tx),
        ledgerHash: tx.ledgerHash || undefined,
        index: entry.position,
      });
    } else {
      const { rawId: _unvouched, ...rest } = entry.rejected;
      amended.set(entry.rejected, { ...rest, reason: `${entry.rejected.reason}; ${reason}` });
    }
  }
  const rejected = [...answer.rejected.map((r) => amended.get(r) ?? r), ...moved.values()];
  // The text as received still holds them: a write must not read records from it.
  return { ...answer, text: undefined, txs: answer.txs.filter((tx) => !moved.has(tx)), rejected };
}

/** A record's fields as the service sent them (its parsed `internalStatus` left out). */
function wireText(tx: LedgerTx): string {
  const { internalStatusParsed: _parsed, ...wire } = tx;
  return JSON.stringify(wire);
}

/** The newest rawId of a stream by key (`order=desc&count=1`), for {@link createRawIdScreen}'s `readHead`. */
export function keyHeadReader(fetchKeyPage: FetchKeyPage, spec: StreamSpec): () => Promise<number | null> {
  return async () => newestRawId(await fetchKeyPage(spec, { cursor: 0, count: 1, order: 'desc' }));
}

/** The newest rawId an answer names, a record set aside included; `null` when it names none. */
function newestRawId(answer: ScreenedAnswer): number | null {
  const ids = [...answer.txs.map((tx) => tx.rawId), ...answer.rejected.map((r) => r.rawId ?? -1)];
  const head = Math.max(-1, ...ids);
  return head < 0 ? null : head;
}

/** {@link createRawIdScreen} for a walk by key of `spec`, each record set aside logged as a warning. */
export function keyWalkScreen(input: {
  fetchKeyPage: FetchKeyPage;
  spec: StreamSpec;
  logger: SyncLogger;
}): RawIdScreen {
  const stream = streamKey(input.spec);
  return createRawIdScreen({
    readHead: keyHeadReader(input.fetchKeyPage, input.spec),
    onSetAside: ({ rawId, reason, head }) =>
      input.logger.warn({ stream, raw_id: rawId, head }, `record set aside: ${reason}`),
  });
}

/**
 * `fetchPage` with every page screened newest first, one screen a stream (its head: page 1's
 * newest rawId, read again only when a record jumps past what is known), each record set aside
 * logged as a warning.
 */
export function screenPages(fetchPage: FetchPage, logger: SyncLogger): FetchPage {
  const screens = new Map<string, RawIdScreen>();
  return async (spec, page) => {
    const key = streamKey(spec);
    let screen = screens.get(key);
    if (screen === undefined) {
      screen = createRawIdScreen({
        readHead: async () => newestRawId(await fetchPage(spec, 1)),
        onSetAside: ({ rawId, reason, head }) =>
          logger.warn({ stream: key, page, raw_id: rawId, head }, `record set aside: ${reason}`),
      });
      screens.set(key, screen);
    }
    return screen.screen(await fetchPage(spec, page), { after: null, order: 'desc' });
  };
}
