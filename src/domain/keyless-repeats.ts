/**
 * Records set aside without a readable rawId where two answers by key meet. The next answer is
 * asked from the last rawId read, so a keyless record listed after it is listed again at the
 * start of the next answer: it is one record, and is set aside once.
 */
import type { RejectedRecord } from './model.js';

/** An answer as placing needs it: its records' rawIds and what it set aside. */
type KeyedAnswer = { txs: ReadonlyArray<{ rawId: number }>; rejected: readonly RejectedRecord[] };

/**
 * The records of an answer that carry a rawId, at their places in its `txs` as served (records
 * set aside keep theirs in `index`), in the order served.
 */
export function keyedPlaces(answer: KeyedAnswer): Array<{ position: number; rawId: number }> {
  const positions = txPositions(answer);
  const places = answer.txs.map((tx, i) => ({ position: positions[i] ?? i, rawId: tx.rawId }));
  for (const r of answer.rejected)
    if (r.rawId !== undefined && r.index !== undefined) places.push({ position: r.index, rawId: r.rawId });
  return places.sort((x, y) => x.position - y.position);
}

/** The place of each of an answer's valid records in its `txs` as served (records set aside keep theirs in `index`). */
export function txPositions(answer: KeyedAnswer): number[] {
  const rejectedAt = new Set(answer.rejected.map((r) => r.index).filter((i) => i !== undefined));
  const positions: number[] = [];
  let position = 0;
  for (let i = 0; i < answer.txs.length; i++) {
    while (rejectedAt.has(position)) position++;
    positions.push(position++);
  }
  return positions;
}

/**
 * The set-aside records of a walk's answers, one after the other, each answer's without the
 * keyless records the answer before it listed after its last rawId (`rejected`: the answer's
 * set-aside records that count, all of them by default).
 */
export function keylessOnce(): (
  answer: KeyedAnswer,
  rejected?: readonly RejectedRecord[],
) => RejectedRecord[] {
  let trailing: ReadonlySet<string> = NONE;
  return (answer, rejected = answer.rejected) => {
    const kept = withoutRepeatedKeyless(answer, trailing, rejected);
    trailing = trailingKeyless(answer);
    return kept;
  };
}

/** The raw texts of the keyless records the answer lists after its last record with a rawId. */
function trailingKeyless(answer: KeyedAnswer): ReadonlySet<string> {
  // Most answers set nothing aside: nothing to place.
  if (!answer.rejected.some((r) => r.rawId === undefined)) return NONE;
  const last = keyedPlaces(answer).at(-1);
  if (last === undefined) return NONE;
  return new Set(
    answer.rejected
      .filter((r) => r.rawId === undefined && r.index !== undefined && r.index > last.position)
      .map((r) => r.raw),
  );
}

/**
 * `rejected` (the answer's set-aside records, or some of them), without the keyless ones the
 * answer lists before its first record with a rawId whose raw texts are in `before` (what the
 * answer before listed after its last record, {@link trailingKeyless}; or, where two ranges meet,
 * what the range below counted past its top).
 */
export function withoutRepeatedKeyless(
  answer: KeyedAnswer,
  before: ReadonlySet<string>,
  rejected: readonly RejectedRecord[],
): RejectedRecord[] {
  if (before.size === 0 || rejected.length === 0) return [...rejected];
  const first = keyedPlaces(answer)[0]?.position ?? Number.POSITIVE_INFINITY;
  return rejected.filter(
    (r) => !(r.rawId === undefined && r.index !== undefined && r.index < first && before.has(r.raw)),
  );
}

const NONE: ReadonlySet<string> = new Set();
