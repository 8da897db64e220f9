/**
 * The parallel backfill's port: its runs, the ranges of rawIds they prove, and the writes of a
 * range's pages with their proofs. Implemented in `src/db/stores/pg-backfill-store.ts`.
 */

import type { HeldRecords } from '../../domain/commit-pages.js';
import type { KeyAnswerText, LedgerTx, RejectedRecord } from '../../domain/model.js';
import type { RawIdRange } from '../../domain/raw-id-ranges.js';
import type { WriteCounts } from './sync-store.js';

/** One parallel backfill of a stream, as stored. */
export interface BackfillRun {
  id: string;
  key: string;
  /** The newest rawId on page 1 when the run began: what the run must prove down to 0. */
  headRawId: number;
  totalPages: number;
  status: 'running' | 'done' | 'failed';
  round: number;
  /** When the run began (ms), after reading its head: its range pages' gaps settle a window later. */
  headAt: number;
  /** The lowest rawId missing from a page read before it could settle; `null` when none was. */
  openGap: number | null;
  /**
   * What the run proves with its own proofs alone, the records up to `floor` being stored already:
   * `(floor, headRawId]`. A number of at least 0: a catch-up of a stream far behind its head, from
   * the stream's settled mark when it began. {@link REPAIR_FLOOR}: a repair (`sync --full`), the
   * whole list again. `null`: a first backfill, which proves the list from rawId 0 with any run's
   * proofs. See {@link runKind}.
   */
  floor: number | null;
  /**
   * A catch-up's gaps at or below it have settled already (`gapFloor` in `settle.ts`: a waiting
   * head that had ripened when it began); `null`: every gap read too soon counts.
   */
  gapFloor: number | null;
}

/** The floor of a repair: nothing below the list's first rawId counts as stored. */
export const REPAIR_FLOOR = -1;

/** What a run is, by its floor: a first backfill, a catch-up of a tail far behind, or a repair. */
export function runKind(run: Pick<BackfillRun, 'floor'>): 'backfill' | 'catch-up' | 'repair' {
  if (run.floor === null) return 'backfill';
  return run.floor < 0 ? 'repair' : 'catch-up';
}

/** A run as its planner records it: a first backfill unless it names a `floor`. */
export type NewBackfillRun = Pick<BackfillRun, 'id' | 'key' | 'headRawId' | 'totalPages'> & {
  floor?: number | null | undefined;
  gapFloor?: number | null | undefined;
};

/** The persistence of the parallel backfill. Implemented in `src/db/stores/pg-backfill-store.ts`. */
export interface BackfillStore extends RangePageWriter {
  /** Records a new run; `null` when the stream already has one running. */
  startRun(run: NewBackfillRun): Promise<BackfillRun | null>;
  getRun(id: string): Promise<BackfillRun | null>;
  /** Whether the stream has a watermark or a walk in progress, read without taking its lease. */
  streamStarted(key: string): Promise<boolean>;
  /** The stream's run in progress, if any. */
  runningRun(key: string): Promise<BackfillRun | null>;
  /** Every range proven for the stream so far, by any run (or by the run `backfillId` alone), merged. */
  provenRanges(key: string, backfillId?: string): Promise<RawIdRange[]>;
  /**
   * Stores the stream's proven ranges in their merged form (same proof, fewer rows), so what is
   * kept grows with the ranges still apart rather than with every batch ever committed. Returns
   * how many ranges are left.
   */
  compactProvenRanges(key: string): Promise<number>;
  /**
   * How many stored records have a rawId above `rawId`: all stored records count, since only the
   * global list, which holds every record, is backfilled in parallel.
   */
  storedAbove(rawId: number): Promise<number>;
  /** Records a check's outcome on the run. */
  recordCheck(input: {
    id: string;
    round: number;
    gaps: RawIdRange[];
    status: BackfillRun['status'];
    error?: string;
  }): Promise<void>;
}

/** What `readAhead` tells a walk by key of an answer. */
export interface ReadAhead {
  hasNextPage: boolean;
  /** Every record the answer served, in order, and their timestamps. */
  rawIds: number[];
  timestamps: number[];
  /** The records of the window, held for their commit. */
  records: HeldRecords;
}

/** One fetched page of a range task, waiting to be committed. */
export interface RangePage {
  page: number;
  records: LedgerTx[] | HeldRecords;
  rejected: RejectedRecord[];
  /** The lowest rawId missing from the page that may still fill in (see `settle.ts`); absent: none. */
  openGap?: number | null | undefined;
}

/** The store's writes of a range's pages (part of `BackfillStore`). */
export interface RangePageWriter {
  /**
   * Stores consecutive pages' records (idempotent upserts) and the ranges they prove, in one
   * transaction; a page's `openGap` lowers the run's (`BackfillRun.openGap`) in the same one.
   */
  commitRangePages(input: {
    key: string;
    backfillId: string;
    pages: RangePage[];
    proven: RawIdRange[];
  }): Promise<WriteCounts>;
  /**
   * Parses an answer by key and encodes its records in the window (above `after`, up to `upTo`)
   * elsewhere, so the walk need not parse it: what the walk needs of it, and its records held
   * for their commit. `null` when the walk is to parse the answer itself: the store does not
   * read ahead, or the answer's text could not be parsed there, or it set a record aside, or one
   * cannot be encoded. `stored`: the records are stored already (a repair), so their commit takes
   * the full way: the store reads the answer but prepares nothing for a copy.
   */
  readAhead(
    answer: KeyAnswerText,
    window: { after: number | null; upTo: number; stored?: boolean | undefined },
  ): Promise<ReadAhead | null>;
}

/**
 * The highest rawId each range of a run read on its first page, by that page. Page numbers drift
 * while records arrive: the records on page `p` when a range begins there are older than those on
 * `p` when the range before ends at `p - 1`, and what lies between is read by neither, a gap for
 * the check to walk again. A range that knows where the next one began reads on until its records
 * reach that range's (overlap or touch it). A next range that has not begun yet will read its first page later, and so newer
 * records: the two overlap without waiting for each other. Kept in memory by `sync`'s lanes
 * (`rangeStarts`), in Redis by the workers' range jobs; a start not known in time only leaves a
 * gap for the check, as before.
 */
export interface RangeStarts {
  /** Records the first page of a range beginning at `page`. */
  began(page: number, rawIds: readonly number[]): Promise<void>;
  /** The highest rawId read on page `page` by a range beginning there, if one has. */
  topAt(page: number): Promise<number | undefined>;
}
