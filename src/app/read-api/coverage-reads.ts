/**
 * How the read API reads the coverage of the streams that could answer (`sync_streams`): under
 * load, every look-up and every list by key asks the same few rows many times a second, and
 * reading them each time cost more than the record read itself (a look-up was two-thirds of its
 * database time in the coverage join). So on a pool of read-only sessions, where such an answer's
 * statements are sent alone anyway, one read serves every answer for {@link COVERAGE_REUSE_MS}.
 * An answer may then be bounded by a watermark that old: still truthful (every record at or below
 * it is stored), its freshness headers as of then.
 */
import { type StreamCoverage, selectStreamCoverage } from '../../db/queries/read-api/stream-coverage.js';
import type { Executor } from '../../db/rows.js';

/** Reads the coverage of the streams of `keys` that exist. */
export type CoverageReader = (db: Executor, keys: readonly string[]) => Promise<StreamCoverage[]>;

/** How long one read of the coverage serves the answers after it: a few of a busy mirror's commits. */
export const COVERAGE_REUSE_MS = 50;

/** Sets of keys (an account's lists each have their own) kept before the settled ones are let go. */
const KEPT_READS = 1000;

/**
 * A {@link CoverageReader} whose reads of the same keys are shared: callers while one runs get
 * its outcome, and so do callers within `reuseMs` after it settled (a failure too, so a burst
 * against a database that is down does not try it once per request).
 */
export function sharedCoverageReads(
  options: {
    reuseMs?: number | undefined;
    now?: (() => number) | undefined;
    /** The read shared. Default: `sync_streams` now. */
    select?: CoverageReader | undefined;
  } = {},
): CoverageReader {
  const reuseMs = options.reuseMs ?? COVERAGE_REUSE_MS;
  const select = options.select ?? selectStreamCoverage;
  const now = options.now ?? (() => performance.now());
  const reads = new Map<string, { outcome: Promise<StreamCoverage[]>; settledAt: number | null }>();
  const fresh = (read: { settledAt: number | null }) =>
    read.settledAt === null || now() - read.settledAt < reuseMs;
  return (db, keys) => {
    const id = keys.join('\n');
    const last = reads.get(id);
    if (last !== undefined && fresh(last)) return last.outcome;
    if (reads.size >= KEPT_READS) for (const [key, read] of reads) if (!fresh(read)) reads.delete(key);
    const read = { outcome: select(db, keys), settledAt: null as number | null };
    const settle = () => {
      read.settledAt = now();
    };
    read.outcome.then(settle, settle);
    reads.set(id, read);
    return read.outcome;
  };
}
