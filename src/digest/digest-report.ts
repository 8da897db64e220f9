/**
 * Digests and comparisons as text, for the command line.
 */
import type { DigestComparison, RangeDifference } from './compare-digests.js';
import type { MirrorDigest } from './range-digest.js';

/** One line per range holding records (`rawIds from–to  count  hash`), then the whole digest. */
export function formatDigest(digest: MirrorDigest): string[] {
  const spans = digest.ranges.map((range) => `${range.from}–${range.to}`);
  const spanWidth = Math.max(0, ...spans.map((span) => span.length));
  const countWidth = Math.max(0, ...digest.ranges.map((range) => String(range.count).length));
  const lines = digest.ranges.map(
    (range, i) =>
      `rawIds ${(spans[i] ?? '').padEnd(spanWidth)}  ${String(range.count).padStart(countWidth)}  ${range.hash}`,
  );
  lines.push(
    `${describeBounds(digest)}, ranges of ${digest.rangeSize}: ${digest.count} records in ` +
      `${digest.ranges.length} ranges, digest ${digest.hash}`,
  );
  return lines;
}

/** Names of the two sides as the text calls them, e.g. `this mirror` and `the simulator`. */
export interface SideNames {
  mirror: string;
  other: string;
}

/** The comparison: a summary line, then one line per differing range with its first differing rawId. */
export function formatComparison(comparison: DigestComparison, names: SideNames): string[] {
  const head =
    `digest of ${describeBounds(comparison)}, ranges of ${comparison.rangeSize}: ` +
    `${names.mirror} ${comparison.mirror.count} records, ${names.other} ${comparison.other.count}`;
  if (comparison.equal) return [`${head}: EQUAL (digest ${comparison.mirror.hash})`];
  return [
    `${head}: DIFFERENT in ${comparison.differences.length} of ${comparison.ranges} ranges`,
    ...comparison.differences.map((difference) => `  ${describeDifference(difference, names)}`),
  ];
}

function describeDifference(difference: RangeDifference, names: SideNames): string {
  const counts = `${difference.mirror?.count ?? 0} vs ${difference.other?.count ?? 0} records`;
  const where = `rawIds ${difference.from}–${difference.to} (${counts})`;
  const first = difference.first;
  if (first === null) {
    return difference.unresolved === 'limit'
      ? `${where}: not narrowed down (too many differing ranges)`
      : `${where}: the records changed during the comparison; run it again`;
  }
  if (first.missingOn !== null) {
    const lacking = first.missingOn === 'mirror' ? names.mirror : names.other;
    return `${where}: first difference at rawId ${first.rawId}: missing in ${lacking}`;
  }
  return `${where}: first difference at rawId ${first.rawId}: ${first.fields.join(', ')} differ${first.fields.length === 1 ? 's' : ''}`;
}

function describeBounds(query: { from: number; to: number | null }): string {
  if (query.to !== null) return `rawIds ${query.from}–${query.to}`;
  return query.from === 0 ? 'all rawIds' : `rawIds from ${query.from}`;
}
