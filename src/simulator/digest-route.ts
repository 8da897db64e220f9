/**
 * `GET /_sim/digest?from=&to=&rangeSize=&lines=1`: the digest of the ground truth, computed by the
 * same function as a mirror's (`src/digest`), so a mirror synced from the simulator and the
 * simulator agree exactly. Every record the simulator shows is in it (a late one once visible),
 * those it serves malformed included: a mirror rejected them, and the comparison says it lacks
 * them.
 */
import type { DigestRecord } from '../digest/canonical-line.js';
import { createDigestBuilder } from '../digest/range-digest.js';
import { json, type Reply } from './public-routes.js';
import type { GroundTruthRecord } from './types.js';

/** Canonical lines are sent for spans this wide at most. */
const MAX_LINES_SPAN = 1000;
const MAX_RANGE_SIZE = 100_000_000;
/** Records hashed between two turns of the event loop, so the simulator keeps serving meanwhile. */
const RECORDS_PER_TURN = 2000;

const EMPTY_EXPRESS = { chainTxHash: '', withdrawFee: '', refundLedgerHash: '', err: '' };

/** Answers a digest request from the ground truth's lines (`afterRawId` exclusive, in rawId order). */
export async function answerDigest(
  recordLines: (afterRawId: number | undefined) => IterableIterator<string>,
  params: URLSearchParams,
): Promise<Reply> {
  const from = wholeNumber(params.get('from'));
  const to = wholeNumber(params.get('to'));
  const rangeSize = wholeNumber(params.get('rangeSize'));
  const lines = params.get('lines') === '1' || params.get('lines') === 'true';
  if (from === null) return json(400, { error: 'err_invalid_from' });
  if (to === null || (to !== undefined && to < (from ?? 0))) return json(400, { error: 'err_invalid_to' });
  if (rangeSize === null || (rangeSize !== undefined && (rangeSize < 1 || rangeSize > MAX_RANGE_SIZE)))
    return json(400, { error: 'err_invalid_range_size' });
  if (lines && (to === undefined || to - (from ?? 0) >= MAX_LINES_SPAN))
    return json(400, { error: 'err_lines_span_too_wide', maxSpan: MAX_LINES_SPAN });
  const builder = createDigestBuilder({ from, to, rangeSize }, { keepLines: lines });
  let sinceTurn = 0;
  for (const line of recordLines(from === undefined || from === 0 ? undefined : from - 1)) {
    const record = JSON.parse(line) as GroundTruthRecord;
    if (to !== undefined && record.rawId > to) break;
    builder.add(digestRecordOf(record));
    if (++sinceTurn === RECORDS_PER_TURN) {
      sinceTurn = 0;
      await new Promise((resolve) => setImmediate(resolve));
    }
  }
  return json(200, builder.finish());
}

/** A record as a mirror stores it: fields older records lack are empty strings. */
function digestRecordOf(record: GroundTruthRecord): DigestRecord {
  return {
    ...record,
    nonce: String(record.nonce),
    version: record.version ?? '',
    targetChainTxHash: record.targetChainTxHash ?? '',
    express: record.express ?? EMPTY_EXPRESS,
  };
}

/** `undefined` when absent, `null` when not a whole number. */
function wholeNumber(value: string | null): number | undefined | null {
  if (value === null || value === '') return undefined;
  return /^\d{1,15}$/.test(value) ? Number(value) : null;
}
