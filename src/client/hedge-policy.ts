/**
 * When to send a second request for a slow page ("hedging"): after a multiple of the recent
 * median answer time, never sooner than a floor, and only while the hedge allowance lasts, so a
 * service that slows down as a whole is not sent twice the load. Pure: no timers, no I/O.
 */

/** Settings of {@link createHedgePolicy}. */
export interface HedgePolicyOptions {
  /** Multiple of the recent median answer time after which a request is hedged; 0 = never. */
  after: number;
  /** Shortest wait before hedging, in milliseconds. */
  minMs: number;
  /** Recent answers the median is taken over. Default 64. */
  window?: number | undefined;
  /** Answers needed before the first hedge: the median of a few is no guide. Default 8. */
  minSamples?: number | undefined;
  /** Hedges earned per answer, i.e. the share of requests that may be hedged over time. Default 0.1. */
  ratio?: number | undefined;
  /** Hedges that may be saved up and spent at once; the allowance starts full. Default 5. */
  burst?: number | undefined;
}

/** The decision state of one client's hedging. */
export interface HedgePolicy {
  /** How long to wait for an answer before hedging a request starting now; `undefined`: do not hedge it. */
  delayMs(): number | undefined;
  /** Spends one hedge of the allowance; false (nothing spent) when none is left. */
  takeHedge(): boolean;
  /** Records how long one successful answer took. */
  record(ms: number): void;
  /** The median of the recent answer times; `undefined` before `minSamples` answers. */
  median(): number | undefined;
}

/** Creates the policy; with `after` 0 it never hedges. */
export function createHedgePolicy(options: HedgePolicyOptions): HedgePolicy {
  const window = options.window ?? 64;
  const minSamples = Math.min(options.minSamples ?? 8, window);
  const ratio = options.ratio ?? 0.1;
  const burst = options.burst ?? 5;
  // The recent samples in arrival order (a ring) and the same samples kept sorted, so the
  // median, asked for on every request, is a look-up rather than a sort.
  const samples = new Float64Array(window);
  const sorted = new Float64Array(window);
  let count = 0;
  let next = 0;
  let allowance = burst;

  const median = (): number | undefined => {
    if (count < minSamples) return undefined;
    const mid = count >> 1;
    return count % 2 === 1
      ? (sorted[mid] as number)
      : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
  };

  return {
    delayMs() {
      if (!(options.after > 0)) return undefined;
      const m = median();
      if (m === undefined) return undefined;
      return Math.max(options.minMs, options.after * m);
    },
    takeHedge() {
      if (allowance < 1) return false;
      allowance -= 1;
      return true;
    },
    record(ms) {
      const value = Math.max(0, ms);
      if (count === window) {
        // Drop the oldest sample from the sorted copy.
        const at = lowerBound(sorted, count, samples[next] as number);
        sorted.copyWithin(at, at + 1, count);
        count -= 1;
      }
      const at = lowerBound(sorted, count, value);
      sorted.copyWithin(at + 1, at, count);
      sorted[at] = value;
      count += 1;
      samples[next] = value;
      next = (next + 1) % window;
      allowance = Math.min(burst, allowance + ratio);
    },
    median,
  };
}

/** The first index of `sorted[0..length)` whose value is not below `value`. */
function lowerBound(sorted: Float64Array, length: number, value: number): number {
  let low = 0;
  let high = length;
  while (low < high) {
    const mid = (low + high) >> 1;
    if ((sorted[mid] as number) < value) low = mid + 1;
    else high = mid;
  }
  return low;
}
