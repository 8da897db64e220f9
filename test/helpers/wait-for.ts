/** Polling with a deadline, for tests that wait on something another process or timer does. */

/** Options of {@link waitFor}. */
export interface WaitForOptions {
  /** Give up after this long. Default 30000 ms. */
  timeoutMs?: number;
  /** Pause between probes. Default 50 ms. */
  everyMs?: number;
}

/**
 * Calls `probe` until it returns something other than `undefined`, `null` or `false`, and returns it;
 * throws `timed out after … waiting for <what>` once `timeoutMs` has passed.
 */
export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | null | false | Promise<T | undefined | null | false>,
  options: WaitForOptions = {},
): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 30_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== null && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 50));
  }
}
