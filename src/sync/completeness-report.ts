import { PAGE_SIZE } from '../defaults.js';
import { findGaps, mergeRanges, type RawIdRange } from './completeness.js';

/** Missing rawIds named in a report; the count is always given. */
const MISSING_LISTED = 20;

/** What `verify` says about one stream. */
export interface StreamCompleteness {
  stream: string;
  /** Everything at or below is proven stored; `null` before the first complete backfill. */
  watermark: number | null;
  /** Ranges proven complete (the backfill's proof, and everything up to the watermark). */
  proven: RawIdRange[];
  /** Ranges at or below the watermark that no proof covers. */
  unprovenGaps: RawIdRange[];
  /** RawIds never used by the service inside proven ranges (first ones only), and how many. */
  holesProvenAbsent: RawIdRange[];
  holeCount: number;
  /** The newest rawId the service lists now. */
  serviceHead: number | null;
  /** Records the service lists: exact when counted by walking, else bounds from `totalPages`. */
  serviceCount: { min: number; max: number; exact: number | null };
  /** Records of the stream in the table (for a filtered or account list, those matching it). */
  tableCount: number | null;
  /** Records the service listed above the watermark (not synced yet), when counted. */
  behind: number | null;
  /**
   * Records the service lists at or below the watermark that the table lacks (neither stored
   * nor set aside as rejected), when the list was walked: how many, and the first of them.
   */
  missing: { count: number; rawIds: number[] } | null;
  /** Conflicts recorded for this stream (records served again with other immutable fields). */
  conflicts: number;
  complete: boolean;
  /** Why not complete, one line each. */
  problems: string[];
}

/**
 * Judges one stream from its proofs and the service's counts. Complete means: a watermark exists,
 * no unproven gap lies below it, and where the service's records were counted exactly, the table
 * holds as many of them at or below the watermark as the service does, and no record of the
 * stream was served again with immutable fields different from the stored ones.
 */
export function judgeStream(input: {
  stream: string;
  watermark: number | null;
  proofRanges: readonly RawIdRange[];
  holes: readonly RawIdRange[];
  holeCount: number;
  serviceHead: number | null;
  totalPages: number;
  pageSize?: number;
  /** The service's records at or below the watermark and above it, when counted by walking. */
  walked?: { atOrBelow: number; above: number } | undefined;
  /** Records stored at or below the watermark, and in all. */
  table?: { atOrBelow: number; total: number } | undefined;
  /**
   * Whether the table's count at or below the watermark must equal the walked one. True for the
   * global list; a filtered or account list's count depends on which records the service counts
   * as the account's, so there the rawIds it lists are checked instead (`unstored`). Default true.
   */
  compareCounts?: boolean | undefined;
  /** RawIds the walk saw at or below the watermark that the table lacks, ascending. */
  unstored?: readonly number[] | undefined;
  /** Conflicts recorded for the stream. Default 0. */
  conflicts?: number | undefined;
}): StreamCompleteness {
  const pageSize = input.pageSize ?? PAGE_SIZE;
  const proven = mergeRanges([
    ...input.proofRanges,
    ...(input.watermark !== null && input.watermark >= 0 ? [{ lo: 0, hi: input.watermark }] : []),
  ]).map(({ lo, hi }) => ({ lo, hi }));
  const unprovenGaps = input.watermark === null ? [] : findGaps(proven, { lo: 0, hi: input.watermark });
  const problems: string[] = [];
  if (input.watermark === null) problems.push('never completely backfilled (no watermark)');
  if (unprovenGaps.length > 0) problems.push(`${unprovenGaps.length} unproven gap(s) below the watermark`);
  if (
    input.compareCounts !== false &&
    input.walked &&
    input.table &&
    input.walked.atOrBelow !== input.table.atOrBelow
  ) {
    problems.push(
      `the service lists ${input.walked.atOrBelow} records at or below the watermark, the table holds ${input.table.atOrBelow}`,
    );
  }
  const unstored = input.unstored ?? [];
  if (unstored.length > 0) {
    const first = unstored.slice(0, MISSING_LISTED).join(', ');
    problems.push(
      `${unstored.length} record(s) the service lists at or below the watermark are missing from the table (rawIds ${first}${unstored.length > MISSING_LISTED ? ', …' : ''})`,
    );
  }
  const conflicts = input.conflicts ?? 0;
  if (conflicts > 0) {
    problems.push(
      `${conflicts} record version(s) served with immutable fields different from the stored ones (see ledger_tx_conflicts)`,
    );
  }
  const exact = input.walked ? input.walked.atOrBelow + input.walked.above : null;
  return {
    stream: input.stream,
    watermark: input.watermark,
    proven,
    unprovenGaps,
    holesProvenAbsent: [...input.holes],
    holeCount: input.holeCount,
    serviceHead: input.serviceHead,
    serviceCount: {
      min: input.totalPages > 0 ? (input.totalPages - 1) * pageSize + 1 : 0,
      max: input.totalPages * pageSize,
      exact,
    },
    tableCount: input.table?.total ?? null,
    behind: input.walked?.above ?? null,
    missing: input.unstored ? { count: unstored.length, rawIds: unstored.slice(0, MISSING_LISTED) } : null,
    conflicts,
    complete: problems.length === 0,
    problems,
  };
}

/** The report as text, one block per stream. */
export function formatCompleteness(reports: readonly StreamCompleteness[]): string {
  const range = (r: RawIdRange) => (r.lo === r.hi ? `${r.lo}` : `${r.lo}-${r.hi}`);
  const list = (ranges: readonly RawIdRange[]) =>
    ranges.length === 0
      ? 'none'
      : ranges.slice(0, 10).map(range).join(', ') + (ranges.length > 10 ? ', …' : '');
  const lines: string[] = [];
  for (const r of reports) {
    const count = r.serviceCount.exact ?? `${r.serviceCount.min}-${r.serviceCount.max}`;
    lines.push(`${r.stream}: ${r.complete ? 'complete' : 'INCOMPLETE'}`);
    lines.push(
      `  watermark ${r.watermark ?? 'none'}; service head ${r.serviceHead ?? 'none'}${r.behind ? ` (${r.behind} records not synced yet)` : ''}`,
    );
    lines.push(`  proven ranges: ${list(r.proven)}`);
    lines.push(`  unproven gaps: ${list(r.unprovenGaps)}`);
    lines.push(
      `  rawId holes proven absent: ${r.holeCount}${r.holeCount > 0 ? ` (${list(r.holesProvenAbsent)})` : ''}`,
    );
    lines.push(`  records: table ${r.tableCount ?? 'not counted'}, service ${count}`);
    for (const problem of r.problems) lines.push(`  problem: ${problem}`);
  }
  if (reports.length === 0) lines.push('no stream synced yet');
  return lines.join('\n');
}

/** A recorded conflict, as `verify` lists it. */
export interface ConflictReport {
  rawId: number;
  /** The columns that differ (`amount`, `ledger_hash`, …). */
  fields: string[];
  /** Stream and page that served it first; null for a re-read by hash. */
  stream: string | null;
  page: number | null;
  detectedAt: string;
  seenCount: number;
  /** The version kept and the version served instead, as columns. */
  stored: Record<string, unknown>;
  served: Record<string, unknown>;
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
      '(stored kept; see ledger_tx_conflicts, delete a row once resolved)',
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
