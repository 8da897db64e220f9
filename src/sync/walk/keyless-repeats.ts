/**
 * Records set aside without a readable rawId where two answers by key meet. The next answer is
 * asked from the last rawId read, so a keyless record listed after it is listed again at the
 * start of the next answer: it is one record, and is set aside once.
 */
import type { RejectedRecord, TxKeyPage } from '../../domain/model.js';

/** The positions in the answer's `txs` (as served) of the records that carry a rawId. */
function keyedPositions(answer: Pick<TxKeyPage, 'txs' | 'rejected'>): number[] {
  const rejectedAt = new Set(answer.rejected.map((r) => r.index).filter((i) => i !== undefined));
  const positions: number[] = [];
  let position = 0;
  for (const _ of answer.txs) {
    while (rejectedAt.has(position)) position++;
    positions.push(position++);
  }
  for (const r of answer.rejected)
    if (r.rawId !== undefined && r.index !== undefined) positions.push(r.index);
  return positions;
}

/** The raw texts of the keyless records the answer lists after its last record with a rawId. */
export function trailingKeyless(answer: Pick<TxKeyPage, 'txs' | 'rejected'>): ReadonlySet<string> {
  const positions = keyedPositions(answer);
  if (positions.length === 0) return new Set();
  const last = Math.max(...positions);
  return new Set(
    answer.rejected
      .filter((r) => r.rawId === undefined && r.index !== undefined && r.index > last)
      .map((r) => r.raw),
  );
}

/**
 * The answer's set-aside records, without the keyless ones it lists before its first record with
 * a rawId that the previous answer listed after its last (`before`, from {@link trailingKeyless}).
 */
export function withoutRepeatedKeyless(
  answer: Pick<TxKeyPage, 'txs' | 'rejected'>,
  before: ReadonlySet<string>,
): RejectedRecord[] {
  if (before.size === 0) return answer.rejected;
  const positions = keyedPositions(answer);
  const first = positions.length === 0 ? Number.POSITIVE_INFINITY : Math.min(...positions);
  return answer.rejected.filter(
    (r) => !(r.rawId === undefined && r.index !== undefined && r.index < first && before.has(r.raw)),
  );
}
