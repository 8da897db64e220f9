import type { ConflictReport } from '../db/queries/conflicts.js';
import { PAGE_SIZE } from '../defaults.js';
import { findGaps, mergeRanges, type RawIdRange } from '../domain/raw-id-ranges.js';
import type { ListCount } from './list-count.js';

/** Missing rawIds named in a report; the count is always given. */
const MISSING_LISTED = 20;

/** What `verify` says about one stream. */
export interface StreamCompleteness {
  stream: string;
  /** How the service's list was read: by page numbers, or by key (one walk of the whole list). */
  dialect: 'page' | 'key';
  /** Requests sent to the service for this stream; null when not counted. */
  requests: number | null;
  /** Everything at or below is proven stored; `null` before the first complete backfill. */
  watermark: number | null;
  /** Ranges proven complete (the backfill's proof, and everything up to the watermark). */
  proven: RawIdRange[];
  /** Ranges at or below the watermark that no proof covers. */
  unprovenGaps: RawIdRange[];
  /** Places below the watermark where the table holds no rawId (first ones), and how many. */
  holes: RawIdRange[];
  holeCount: number;
  /**
   * What showed that the service lists no record in those holes (the missing records named
   * aside): a walk of the list, or its count agreeing with the table's; null when nothing did.
   */
  holesAbsentBy: 'walk' | 'count' | null;
  /** The newest rawId the service lists now. */
  serviceHead: number | null;
  /** Records the service lists: exact when counted, else bounds from `totalPages`. */
  serviceCount: { min: number; max: number; exact: number | null };
  /** Records of the stream in the table (for a filtered or account list, those matching it). */
  tableCount: number | null;
  /** Records the service listed above the watermark (not synced yet), when counted. */
  behind: number | null;
  /**
   * The list's records at or below the watermark counted against the table's, whatever the
   * list's length, with the missing ones located by bisection; null without a watermark.
   */
  count: ListCount | null;
  /**
   * What `rejected_records` holds of the list: `setAside`, records at or below the watermark
   * with a readable rawId but a malformed field (counted in `count.stored`); `unkeyableKept`,
   * records kept without a readable rawId (the list's are `count.withoutRawId`). Null without a
   * watermark.
   */
  rejected: { setAside: number; unkeyableKept: number } | null;
  /**
   * Records the service lists at or below the watermark that the table lacks (neither stored
   * nor set aside as rejected), from the walk and the count: how many, and the first of them.
   */
  missing: { count: number; rawIds: number[] } | null;
  /**
   * Records the service lists above the stream's settled mark that the table lacks: shown late,
   * after the last sync read their span, which a sync a settling window later reads again
   * (`sync/settle.ts`). Not
   * a problem: a stream with these alone is complete, reported as settling. Null when none.
   */
  settling: { count: number; rawIds: number[]; settled: number } | null;
  /** Conflicts recorded for this stream (records served again with other immutable fields). */
  conflicts: number;
  complete: boolean;
  /** Why not complete, one line each. */
  problems: string[];
}

/**
 * Judges one stream from its proofs, its count and the service's pages. Complete means: a
 * watermark exists, no unproven gap lies below it, the list's count settled, every record the
 * service lists at or below the watermark is in the table (or set aside as rejected), the table
 * holds no record of the list that the service does not list, and no record of the stream was
 * served again with immutable fields different from the stored ones.
 */
export function judgeStream(input: {
  stream: string;
  watermark: number | null;
  provenRanges: readonly RawIdRange[];
  holes: readonly RawIdRange[];
  holeCount: number;
  serviceHead: number | null;
  totalPages: number;
  pageSize?: number;
  /** The service's records at or below the watermark and above it, when counted by walking. */
  walked?: { atOrBelow: number; above: number } | undefined;
  /** Records stored at or below the watermark, and in all. */
  table?: { atOrBelow: number; total: number } | undefined;
  /** The count against the table, when the stream has a watermark. */
  count?: ListCount | undefined;
  /** RawIds the walk saw at or below the watermark that the table lacks, ascending. */
  unstored?: readonly number[] | undefined;
  /** What `rejected_records` holds of the list (see {@link StreamCompleteness.rejected}). */
  rejected?: { setAside: number; unkeyableKept: number } | undefined;
  /** Conflicts recorded for the stream. Default 0. */
  conflicts?: number | undefined;
  /** How the list was read. Default `page`. */
  dialect?: 'page' | 'key' | undefined;
  /** Requests sent for the stream, when counted. */
  requests?: number | undefined;
  /** Records the service lists in all, when a walk by key read the whole list (no page count then). */
  listedInAll?: number | undefined;
  /**
   * The stream's settled mark (`null`, or absent: none kept). A record listed above it may have
   * been shown late, after the last sync read its span: a sync a settling window later reads that
   * span again (`sync/settle.ts`), so it is settling, not missing.
   */
  settled?: number | null | undefined;
}): StreamCompleteness {
  const pageSize = input.pageSize ?? PAGE_SIZE;
  const proven = mergeRanges([
    ...input.provenRanges,
    ...(input.watermark !== null && input.watermark >= 0 ? [{ lo: 0, hi: input.watermark }] : []),
  ]).map(({ lo, hi }) => ({ lo, hi }));
  const unprovenGaps = input.watermark === null ? [] : findGaps(proven, { lo: 0, hi: input.watermark });
  const { missing, settling } = splitSettling(mergeMissing(input.unstored, input.count), input.settled);
  const problems: string[] = [];
  if (input.watermark === null) problems.push('never completely backfilled (no watermark)');
  if (unprovenGaps.length > 0) problems.push(`${unprovenGaps.length} unproven gap(s) below the watermark`);
  if (input.count) problems.push(...countProblems(input.count, settling?.count ?? 0));
  if (missing && missing.count > 0) problems.push(missingProblem(missing));
  const conflicts = input.conflicts ?? 0;
  if (conflicts > 0) {
    problems.push(
      `${conflicts} record version(s) served with immutable fields different from the stored ones (see ledger_tx_conflicts)`,
    );
  }
  const counted = input.count?.listed != null ? input.count : null;
  const exact = input.walked
    ? input.walked.atOrBelow + input.walked.above
    : counted
      ? counted.listed! + (counted.above ?? 0)
      : null;
  return {
    stream: input.stream,
    dialect: input.dialect ?? 'page',
    requests: input.requests ?? null,
    watermark: input.watermark,
    proven,
    unprovenGaps,
    holes: [...input.holes],
    holeCount: input.holeCount,
    holesAbsentBy: input.holeCount === 0 ? null : holesAbsentBy(input, missing),
    serviceHead: input.serviceHead,
    serviceCount:
      input.listedInAll === undefined
        ? {
            min: input.totalPages > 0 ? (input.totalPages - 1) * pageSize + 1 : 0,
            max: input.totalPages * pageSize,
            exact,
          }
        : { min: input.listedInAll, max: input.listedInAll, exact: input.listedInAll },
    tableCount: input.table?.total ?? null,
    behind: input.walked?.above ?? counted?.above ?? null,
    count: input.count ?? null,
    rejected: input.rejected ?? null,
    missing,
    settling,
    conflicts,
    complete: problems.length === 0,
    problems,
  };
}

/**
 * The missing records above the settled mark (settling) apart from the rest (missing). Only when
 * every missing record is named: one not named may lie at or below the mark.
 */
function splitSettling(
  listed: { count: number; rawIds: number[] } | null,
  settled: number | null | undefined,
): Pick<StreamCompleteness, 'missing' | 'settling'> {
  if (listed === null || settled === null || settled === undefined || listed.count > listed.rawIds.length)
    return { missing: listed, settling: null };
  const late = listed.rawIds.filter((rawId) => rawId > settled);
  if (late.length === 0) return { missing: listed, settling: null };
  const below = listed.rawIds.filter((rawId) => rawId <= settled);
  return {
    missing: { count: below.length, rawIds: below },
    settling: { count: late.length, rawIds: late, settled },
  };
}

/** The walk's missing rawIds and the count's, together; null when neither looked. */
function mergeMissing(
  unstored: readonly number[] | undefined,
  count: ListCount | undefined,
): { count: number; rawIds: number[] } | null {
  if (unstored === undefined && count === undefined) return null;
  const rawIds = [...new Set([...(unstored ?? []), ...(count?.missing.rawIds ?? [])])].sort((a, b) => a - b);
  const total = Math.max(rawIds.length, unstored?.length ?? 0, count?.missing.count ?? 0);
  return { count: total, rawIds: rawIds.slice(0, MISSING_LISTED) };
}

function missingProblem(missing: { count: number; rawIds: number[] }): string {
  const named = missing.rawIds.join(', ');
  const more = missing.count - missing.rawIds.length;
  const which =
    missing.rawIds.length === 0
      ? 'none located'
      : `rawIds ${named}${more > 0 ? `; ${more} more not named` : ''}`;
  return `${missing.count} record(s) the service lists at or below the watermark are missing from the table (${which})`;
}

/**
 * What the count found wrong: the counts themselves (but for `settling` records missing above the
 * settled mark), records the table holds beyond the list, no settled count.
 */
function countProblems(count: ListCount, settling: number): string[] {
  const problems: string[] = [];
  if (count.listed !== null && (count.missing.count > settling || count.extra > 0))
    problems.push(
      `the service lists ${count.listed} records at or below the watermark, the table holds ${count.stored}` +
        (count.withoutRawId > 0 ? `, ${count.withoutRawId} have no readable rawId` : ''),
    );
  if (count.extra > 0)
    problems.push(
      `the table holds ${count.extra} record(s) of this list at or below the watermark that the service does not list` +
        named(count.extraRawIds, count.extra),
    );
  const differing = count.differing;
  if (differing !== undefined && differing.count > 0) {
    const which = differing.records.map((d) => `${d.rawId}: ${d.fields.join(', ')}`).join('; ');
    const more = differing.count - differing.records.length;
    problems.push(
      `${differing.count} record(s) the service lists at or below the watermark differ from the stored ones in immutable fields (rawId ${which}${more > 0 ? `; ${more} more not named` : ''})`,
    );
  }
  if (count.unsettled !== null) problems.push(`${count.unsettled}; run verify again`);
  return problems;
}

/** ` (rawIds a, b; n more not named)` for the rawIds named of `total`; empty when none is named. */
function named(rawIds: readonly number[] | undefined, total: number): string {
  if (rawIds === undefined || rawIds.length === 0) return '';
  const more = total - rawIds.length;
  return ` (rawIds ${rawIds.join(', ')}${more > 0 ? `; ${more} more not named` : ''})`;
}

/** Whether the holes were shown to be absent from the list, and how. */
function holesAbsentBy(
  input: { walked?: unknown; count?: ListCount | undefined },
  missing: { count: number; rawIds: number[] } | null,
): 'walk' | 'count' | null {
  const allNamed = missing === null || missing.count === missing.rawIds.length;
  if (input.walked !== undefined && allNamed) return 'walk';
  const count = input.count;
  const settled = count !== undefined && count.listed !== null && count.unsettled === null;
  return settled && count.extra === 0 && allNamed ? 'count' : null;
}

/** The report as text, one block per stream. */
export function formatCompleteness(reports: readonly StreamCompleteness[]): string {
  const lines: string[] = [];
  for (const r of reports) {
    const count = r.serviceCount.exact ?? `${r.serviceCount.min}-${r.serviceCount.max}`;
    lines.push(`${r.stream}: ${!r.complete ? 'INCOMPLETE' : r.settling ? 'settling' : 'complete'}`);
    lines.push(
      `  watermark ${r.watermark ?? 'none'}; service head ${r.serviceHead ?? 'none'}${r.behind ? ` (${r.behind} records not synced yet)` : ''}`,
    );
    lines.push(`  proven ranges: ${listRanges(r.proven)}`);
    lines.push(`  unproven gaps: ${listRanges(r.unprovenGaps)}`);
    if (r.holeCount > 0)
      lines.push(
        `  rawId holes (rawIds not stored): ${r.holeCount} (${listRanges(r.holes)}); ${holesBasis(r)}`,
      );
    lines.push(`  records: table ${r.tableCount ?? 'not counted'}, service ${count}`);
    if (r.count?.listed != null)
      lines.push(`  at or below the watermark: ${countSum(r.count, r.rejected, r.dialect)}`);
    if (r.settling) lines.push(`  settling: ${settlingLine(r.settling)}`);
    for (const problem of r.problems) lines.push(`  problem: ${problem}`);
  }
  if (reports.length === 0) lines.push('no stream synced yet');
  return lines.join('\n');
}

/**
 * The count as a sum that adds up: listed = table (stored + set aside with a reason) + served
 * without a readable rawId + missing - not listed.
 */
function countSum(
  count: ListCount,
  rejected: StreamCompleteness['rejected'],
  dialect: StreamCompleteness['dialect'],
): string {
  const setAside = rejected?.setAside ?? 0;
  const table =
    setAside > 0
      ? `table ${count.stored} (${count.stored - setAside} stored, ${setAside} set aside in rejected_records with a reason)`
      : `table ${count.stored}`;
  const unkeyable =
    count.withoutRawId > 0
      ? ` + ${count.withoutRawId} served without a readable rawId (cannot be keyed; rejected_records keeps ${rejected?.unkeyableKept ?? 0} such)`
      : '';
  const extra = count.extra > 0 ? ` - ${count.extra} the service does not list` : '';
  return `service ${count.listed} = ${table}${unkeyable} + ${count.missing.count} missing${extra} (${count.requests} requests${dialect === 'key' ? ' by key, the whole list' : ''})`;
}

function settlingLine(settling: NonNullable<StreamCompleteness['settling']>): string {
  return (
    `${settling.count} record(s) the service lists above the settled mark ${settling.settled} are not stored yet ` +
    `(rawIds ${settling.rawIds.join(', ')}): shown late, after a sync read their span; a sync a settling window later reads it again`
  );
}

function listRanges(ranges: readonly RawIdRange[]): string {
  const range = (r: RawIdRange) => (r.lo === r.hi ? `${r.lo}` : `${r.lo}-${r.hi}`);
  return ranges.length === 0
    ? 'none'
    : ranges.slice(0, 10).map(range).join(', ') + (ranges.length > 10 ? ', …' : '');
}

function holesBasis(r: StreamCompleteness): string {
  const missing = (r.missing !== null && r.missing.count > 0) || r.settling !== null;
  if (r.holesAbsentBy === 'walk')
    return `the service lists none of them${missing ? ' but the missing records below' : ''} (a walk of the list)`;
  if (r.holesAbsentBy === 'count')
    return missing
      ? "the service lists none of them but the missing records below (the list's count exceeds the table's by those alone)"
      : "the service lists none of them (the list's count equals the table's)";
  return 'not proven absent';
}

/** The conflicts as text lines: one per record version, with the differing values kept → served. */
export function formatConflicts(input: { total: number; conflicts: readonly ConflictReport[] }): string[] {
  if (input.total === 0) return [];
  const value = (v: unknown) => {
    const text = typeof v === 'string' ? v : JSON.stringify(v);
    return text.length > 42 ? `${text.slice(0, 40)}…` : text;
  };
  const lines = [
    `conflicts: ${input.total} record version(s) served with immutable fields different from the stored ones ` +
      '(stored kept; see ledger_tx_conflicts: once looked into, set its resolved_at to keep the stored version)',
  ];
  for (const c of input.conflicts) {
    const where = c.stream === null ? 're-read' : `${c.stream} page ${c.page ?? '?'}`;
    const diff = c.fields.map((f) => `${f} ${value(c.stored[f])} -> ${value(c.served[f])}`).join('; ');
    lines.push(`  rawId ${c.rawId} (${where}, ${c.detectedAt}, seen ${c.seenCount}x): ${diff}`);
  }
  if (input.total > input.conflicts.length)
    lines.push(`  … and ${input.total - input.conflicts.length} more`);
  return lines;
}
