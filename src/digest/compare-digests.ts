/**
 * Comparing two copies of the ledger by their digests: range by range, then each differing range
 * narrowed down by asking both sides for digests of ever smaller ranges, until the canonical
 * lines of a few records name the first differing rawId and what differs in it. Pure: the two
 * sides are handed in as functions.
 */
import { type DigestField, differingFields } from './canonical-line.js';
import type { MirrorDigest, RangeDigest, ResolvedDigestQuery } from './range-digest.js';

/** One copy of the ledger, asked for digests. */
export interface DigestSource {
  /** The digest of `query`; with `lines`, each range carries its canonical lines. */
  digest(query: ResolvedDigestQuery, options?: { lines?: boolean }): Promise<MirrorDigest>;
}

/** The first record that differs within a range. */
export interface FirstDifference {
  rawId: number;
  /** The side that lacks the record, or `null` when both hold it with different values. */
  missingOn: 'mirror' | 'other' | null;
  /** The fields whose values differ, when both sides hold it. */
  fields: DigestField[];
}

/** A range whose hash differs between the two sides (or that one side lacks entirely). */
export interface RangeDifference {
  from: number;
  to: number;
  mirror: { count: number; hash: string } | null;
  other: { count: number; hash: string } | null;
  /** `null` when it could not be narrowed down: see {@link RangeDifference.unresolved}. */
  first: FirstDifference | null;
  /**
   * Why `first` is null: `changed` (the sides agreed on every smaller range, so records changed
   * during the comparison; run it again), `limit` (more differing ranges than were narrowed).
   */
  unresolved?: 'changed' | 'limit';
}

/** The outcome of {@link compareDigests}. */
export interface DigestComparison {
  equal: boolean;
  rangeSize: number;
  from: number;
  to: number | null;
  mirror: { count: number; hash: string };
  other: { count: number; hash: string };
  /** Ranges holding records on either side. */
  ranges: number;
  differences: RangeDifference[];
}

/** Options of {@link compareDigests}. */
export interface CompareOptions {
  mirror: DigestSource;
  other: DigestSource;
  query: ResolvedDigestQuery;
  /** Differing ranges narrowed down at most; the others are listed without their first rawId. Default 100. */
  narrowLimit?: number | undefined;
  /** Ranges a narrowing step splits a range into. Default 16. */
  fanout?: number | undefined;
  /** A range this wide or narrower is compared record by record. Default 64 rawIds. */
  leafWidth?: number | undefined;
  signal?: AbortSignal | undefined;
}

/** Compares the two sides' digests of `query`, narrowing each differing range down to its first differing record. */
export async function compareDigests(options: CompareOptions): Promise<DigestComparison> {
  const { mirror, other, query } = options;
  const [left, right] = await Promise.all([mirror.digest(query), other.digest(query)]);
  const pairs = pairRanges(left.ranges, right.ranges);
  const differences: RangeDifference[] = [];
  const limit = options.narrowLimit ?? 100;
  for (const [a, b] of pairs) {
    if (a?.hash === b?.hash) continue;
    const span = (a ?? b) as RangeDigest;
    const difference: RangeDifference = {
      from: span.from,
      to: span.to,
      mirror: a ? { count: a.count, hash: a.hash } : null,
      other: b ? { count: b.count, hash: b.hash } : null,
      first: null,
    };
    if (differences.length < limit) {
      options.signal?.throwIfAborted();
      difference.first = await narrow(options, { from: span.from, to: span.to });
      if (difference.first === null) difference.unresolved = 'changed';
    } else {
      difference.unresolved = 'limit';
    }
    differences.push(difference);
  }
  return {
    equal: differences.length === 0 && left.hash === right.hash,
    rangeSize: query.rangeSize,
    from: query.from,
    to: query.to,
    mirror: { count: left.count, hash: left.hash },
    other: { count: right.count, hash: right.hash },
    ranges: pairs.length,
    differences,
  };
}

/** Ranges of both sides matched by their first rawId, in rawId order; a side lacking one gets `undefined`. */
function pairRanges(
  left: readonly RangeDigest[],
  right: readonly RangeDigest[],
): Array<[RangeDigest | undefined, RangeDigest | undefined]> {
  const pairs: Array<[RangeDigest | undefined, RangeDigest | undefined]> = [];
  let i = 0;
  let j = 0;
  while (i < left.length || j < right.length) {
    const a = left[i];
    const b = right[j];
    if (a !== undefined && (b === undefined || a.from < b.from)) {
      pairs.push([a, undefined]);
      i++;
    } else if (b !== undefined && (a === undefined || b.from < a.from)) {
      pairs.push([undefined, b]);
      j++;
    } else {
      pairs.push([a, b]);
      i++;
      j++;
    }
  }
  return pairs;
}

/** Narrows a differing span down to its first differing record; `null` when the sides now agree on it. */
async function narrow(
  options: CompareOptions,
  start: { from: number; to: number },
): Promise<FirstDifference | null> {
  const fanout = options.fanout ?? 16;
  const leafWidth = options.leafWidth ?? 64;
  let span = start;
  while (span.to - span.from + 1 > leafWidth) {
    options.signal?.throwIfAborted();
    const rangeSize = Math.ceil((span.to - span.from + 1) / fanout);
    const query = { from: span.from, to: span.to, rangeSize };
    const [a, b] = await Promise.all([options.mirror.digest(query), options.other.digest(query)]);
    const differing = pairRanges(a.ranges, b.ranges).find(([x, y]) => x?.hash !== y?.hash);
    if (differing === undefined) return null;
    const range = (differing[0] ?? differing[1]) as RangeDigest;
    span = { from: range.from, to: range.to };
  }
  const query = { ...span, rangeSize: span.to - span.from + 1 };
  const [a, b] = await Promise.all([
    options.mirror.digest(query, { lines: true }),
    options.other.digest(query, { lines: true }),
  ]);
  return firstDifferentLine(linesByRawId(a), linesByRawId(b));
}

function linesByRawId(digest: MirrorDigest): Map<number, string> {
  const lines = new Map<number, string>();
  for (const range of digest.ranges) {
    for (const line of range.lines ?? []) lines.set(rawIdOfLine(line), line);
  }
  return lines;
}

function rawIdOfLine(line: string): number {
  const values: unknown = JSON.parse(line);
  const rawId = Array.isArray(values) ? values[0] : undefined;
  if (typeof rawId !== 'number') throw new Error('a canonical line without its rawId');
  return rawId;
}

function firstDifferentLine(mirror: Map<number, string>, other: Map<number, string>): FirstDifference | null {
  const rawIds = [...new Set([...mirror.keys(), ...other.keys()])].sort((x, y) => x - y);
  for (const rawId of rawIds) {
    const a = mirror.get(rawId);
    const b = other.get(rawId);
    if (a === b) continue;
    if (a === undefined) return { rawId, missingOn: 'mirror', fields: [] };
    if (b === undefined) return { rawId, missingOn: 'other', fields: [] };
    return { rawId, missingOn: null, fields: differingFields(a, b) };
  }
  return null;
}
