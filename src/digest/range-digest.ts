/**
 * The digest of a set of records: a hash per fixed range of rawIds and one over those hashes, so
 * two copies of the ledger (two mirrors, a mirror and the simulator) can tell which ranges
 * differ without sending their records. Pure: the records are handed in, in rawId order, and
 * only the range being hashed is held.
 */
import { createHash, type Hash } from 'node:crypto';
import { canonicalLine, type DigestRecord } from './canonical-line.js';

/** rawIds per range unless asked otherwise. */
export const DEFAULT_RANGE_SIZE = 10_000;

/** Which rawIds a digest covers and how they are split. */
export interface DigestQuery {
  /** First rawId covered. Default 0. */
  from?: number | undefined;
  /** Last rawId covered (included). Default (or `null`): no bound. */
  to?: number | null | undefined;
  /** Range `k` holds the rawIds from `k × rangeSize` to `(k + 1) × rangeSize − 1`. Default 10,000. */
  rangeSize?: number | undefined;
}

/** The digest of one range that holds at least one record. */
export interface RangeDigest {
  /** First rawId of the range, or the query's `from` when that is higher. */
  from: number;
  /** Last rawId of the range (included), or the query's `to` when that is lower. */
  to: number;
  /** Records in the range. */
  count: number;
  /** sha256 (hex) of the records' canonical lines, in rawId order, joined by `\n`. */
  hash: string;
  /** The canonical lines themselves, when asked for (small ranges only). */
  lines?: string[];
}

/** The digest of the records a query covers. */
export interface MirrorDigest {
  rangeSize: number;
  from: number;
  /** `null`: no upper bound. */
  to: number | null;
  /** Records covered. */
  count: number;
  /** sha256 (hex) of the ranges' hashes, in rawId order, joined by `\n`; of the empty text when no record. */
  hash: string;
  /** Ranges holding at least one record, in rawId order; empty ranges are left out. */
  ranges: RangeDigest[];
}

/** Feeds records, in increasing rawId order, into a digest. */
export interface DigestBuilder {
  /** Adds a record; one outside the query's bounds is skipped. */
  add(record: DigestRecord): void;
  finish(): MirrorDigest;
}

/** A query with its defaults applied. */
export interface ResolvedDigestQuery {
  from: number;
  to: number | null;
  rangeSize: number;
}

/** Applies the defaults; throws `RangeError` on bounds callers were meant to check. */
export function resolveDigestQuery(query: DigestQuery = {}): ResolvedDigestQuery {
  const from = query.from ?? 0;
  const to = query.to ?? null;
  const rangeSize = query.rangeSize ?? DEFAULT_RANGE_SIZE;
  if (!Number.isSafeInteger(from) || from < 0) throw new RangeError(`digest from must be a rawId (${from})`);
  if (to !== null && (!Number.isSafeInteger(to) || to < from))
    throw new RangeError(`digest to must be a rawId at least from (${to})`);
  if (!Number.isSafeInteger(rangeSize) || rangeSize < 1)
    throw new RangeError(`digest range size must be a whole number >= 1 (${rangeSize})`);
  return { from, to, rangeSize };
}

/** The bounds of the range holding `rawId`, clipped to the query's. */
export function rangeOf(query: ResolvedDigestQuery, rawId: number): { from: number; to: number } {
  const start = Math.floor(rawId / query.rangeSize) * query.rangeSize;
  const end = Math.min(start + query.rangeSize - 1, Number.MAX_SAFE_INTEGER);
  return { from: Math.max(start, query.from), to: query.to === null ? end : Math.min(end, query.to) };
}

/**
 * A builder of the digest of `query`. Records must come in strictly increasing rawId order (as
 * the table's primary key and the simulator's list give them); `keepLines` adds each range's
 * canonical lines to it.
 */
export function createDigestBuilder(
  query: DigestQuery = {},
  options: { keepLines?: boolean } = {},
): DigestBuilder {
  const resolved = resolveDigestQuery(query);
  const ranges: RangeDigest[] = [];
  let current: { from: number; to: number; count: number; hash: Hash; lines: string[] | undefined } | null =
    null;
  let lastRawId = -1;
  const close = () => {
    if (current === null) return;
    const range: RangeDigest = {
      from: current.from,
      to: current.to,
      count: current.count,
      hash: current.hash.digest('hex'),
    };
    if (current.lines) range.lines = current.lines;
    ranges.push(range);
    current = null;
  };
  return {
    add(record) {
      const { rawId } = record;
      if (rawId <= lastRawId) throw new Error(`digest records out of order: ${rawId} after ${lastRawId}`);
      lastRawId = rawId;
      if (rawId < resolved.from || (resolved.to !== null && rawId > resolved.to)) return;
      const line = canonicalLine(record);
      if (current !== null && rawId > current.to) close();
      if (current === null) {
        current = { ...rangeOf(resolved, rawId), count: 0, hash: createHash('sha256'), lines: undefined };
        if (options.keepLines) current.lines = [];
      } else {
        current.hash.update('\n');
      }
      current.hash.update(line);
      current.count++;
      current.lines?.push(line);
    },
    finish() {
      close();
      return {
        rangeSize: resolved.rangeSize,
        from: resolved.from,
        to: resolved.to,
        count: ranges.reduce((sum, range) => sum + range.count, 0),
        hash: overallHash(ranges),
        ranges,
      };
    },
  };
}

/** The digest of records in any order (sorted here); two records with one rawId are an error. */
export function digestRecords(
  records: Iterable<DigestRecord>,
  query: DigestQuery = {},
  options: { keepLines?: boolean } = {},
): MirrorDigest {
  const sorted = [...records].sort((a, b) => a.rawId - b.rawId);
  const builder = createDigestBuilder(query, options);
  for (const record of sorted) builder.add(record);
  return builder.finish();
}

/** sha256 (hex) of the range hashes joined by `\n`. */
export function overallHash(ranges: readonly Pick<RangeDigest, 'hash'>[]): string {
  return createHash('sha256')
    .update(ranges.map((range) => range.hash).join('\n'))
    .digest('hex');
}
