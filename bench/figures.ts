/** A scenario part that could not run, and why. */
export interface NotRun {
  notRun: string;
}

/** Either a measurement or the reason there is none. */
export type Maybe<T> = T | NotRun;

export function isNotRun(value: unknown): value is NotRun {
  return typeof value === 'object' && value !== null && 'notRun' in value;
}

/** One measured pass over records: what the user would compare. */
export interface ThroughputRun {
  /** What ran, in words. */
  label: string;
  /** Rows in PostgreSQL afterwards (records parsed, for the HTTP ceiling). */
  rows: number;
  /** Records the simulator serves for the same pass (its ground truth), when known. */
  expectedRows: number | null;
  /** `rows === expectedRows`. */
  rowsMatch: boolean | null;
  wallMs: number;
  rowsPerSecond: number;
  /** List pages the simulator served for this pass. */
  pagesRequested: number | null;
  /** Peak resident memory of the measured processes, summed (bytes); null when not a separate process. */
  peakRssBytes: number | null;
  /** Peak resident memory of each measured process (bytes). */
  peakRssPerProcessBytes?: Array<number | null>;
  /**
   * CPU time of the measured processes (user + system, ms), summed: far below `wallMs` means the
   * process mostly waited (on the database or the service).
   */
  cpuMs?: number | null;
  /** List requests the simulator served for this pass, by dialect (key, page numbers). */
  listRequests?: { key: number; page: number };
  /** Set when only a leading slice of the pages was run (the rate is the slice's). */
  slice?: { pages: number; totalPages: number };
  note?: string;
}

export function throughput(input: Omit<ThroughputRun, 'rowsPerSecond' | 'rowsMatch'>): ThroughputRun {
  return {
    ...input,
    rowsMatch: input.expectedRows === null ? null : input.rows === input.expectedRows,
    rowsPerSecond: input.wallMs > 0 ? round((input.rows * 1000) / input.wallMs, 1) : 0,
  };
}

/**
 * Runs `measure` `times` times, one after the other, and returns the run of median wall time
 * with the median CPU time and peak memory of all the runs (each varies on its own), every run's
 * wall time in its note.
 */
export async function medianRun<T extends ThroughputRun>(
  times: number,
  measure: () => Promise<T>,
): Promise<T> {
  const runs: T[] = [];
  for (let i = 0; i < times; i++) runs.push(await measure());
  return medianOfRuns(runs);
}

/**
 * The run of median wall time among `runs`, with the median CPU time and peak memory, every run's
 * time in its note; a single run as it is. A run that did not happen makes the whole not run.
 */
export function medianOfRuns<T extends ThroughputRun>(runs: readonly T[]): T;
export function medianOfRuns<T extends ThroughputRun>(runs: ReadonlyArray<Maybe<T>>): Maybe<T>;
export function medianOfRuns<T extends ThroughputRun>(runs: ReadonlyArray<Maybe<T>>): Maybe<T> {
  const failed = runs.find(isNotRun);
  if (failed) return failed;
  const done = runs as readonly T[];
  if (done.length === 1) return done[0]!;
  const median = [...done].sort((a, b) => a.wallMs - b.wallMs)[Math.floor((done.length - 1) / 2)]!;
  const walls = done.map((r) => (r.wallMs / 1000).toFixed(1)).join(', ');
  const note = `median of ${done.length} runs (${walls} s)`;
  return {
    ...median,
    cpuMs: medianOf(done.map((r) => r.cpuMs)) ?? median.cpuMs,
    peakRssBytes: medianOf(done.map((r) => r.peakRssBytes)) ?? median.peakRssBytes,
    note: median.note ? `${median.note}; ${note}` : note,
  };
}

/** The median of the values present; null when none is. */
function medianOf(values: ReadonlyArray<number | null | undefined>): number | null {
  const present = values.filter((v): v is number => typeof v === 'number').sort((a, b) => a - b);
  return present.length === 0 ? null : present[Math.floor((present.length - 1) / 2)]!;
}

export function round(value: number, digits = 3): number {
  const f = 10 ** digits;
  return Math.round(value * f) / f;
}

/** Error text for a NotRun, one line. */
export function reason(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0]?.slice(0, 400) ?? 'unknown error';
}

/** List requests (both dialects) per stored row of a run; not run when the run did not count them. */
export function requestsPerRow(run: Maybe<ThroughputRun> | undefined): Maybe<number> {
  if (run === undefined) return { notRun: 'scenario not selected' };
  if (isNotRun(run)) return run;
  if (run.listRequests === undefined) return { notRun: 'list requests not counted' };
  if (run.rows === 0) return { notRun: 'no rows stored' };
  return round((run.listRequests.key + run.listRequests.page) / run.rows, 5);
}
