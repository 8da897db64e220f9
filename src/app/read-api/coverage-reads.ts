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
import { sharedRead } from '../shared-read.js';

/** Reads the coverage of the streams of `keys` that exist. */
export type CoverageReader = (db: Executor, keys: readonly string[]) => Promise<StreamCoverage[]>;

/** How long one read of the coverage serves the answers after it: a few of a busy mirror's commits. */
export const COVERAGE_REUSE_MS = 50;

/** Sets of keys (an account's lists each have their own) kept before they are all let go. */
const KEPT_READS = 1000;

/**
 * A {@link CoverageReader} of one database whose reads of the same keys are shared
 * (`sharedRead`): callers while one runs get its outcome, and so do callers within `reuseMs`
 * after it settled (a failure too).
 */
export function sharedCoverageReads(
  options: {
    reuseMs?: number | undefined;
    now?: (() => number) | undefined;
    /** The read shared. Default: `sync_streams` now. */
    select?: CoverageReader | undefined;
  } = {},
): CoverageReader {
  const reuse = { reuseMs: options.reuseMs ?? COVERAGE_REUSE_MS, now: options.now };
  const select = options.select ?? selectStreamCoverage;
  const reads = new Map<string, () => Promise<StreamCoverage[]>>();
  return (db, keys) => {
    const id = keys.join('\n');
    let read = reads.get(id);
    if (read === undefined) {
      if (reads.size >= KEPT_READS) reads.clear();
      read = sharedRead(() => select(db, keys), reuse);
      reads.set(id, read);
    }
    return read();
  };
}
