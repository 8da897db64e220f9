/**
 * An answer that came back empty though the list says more follow: asked again after a pause
 * doubled each time, then taken as malformed. A service behind a cache or a replica shows such an
 * answer for a moment; one that keeps showing it is broken, and the read fails rather than end
 * early. Used by the source by key and the range by page number; the walk by page number asks
 * through its page window (`walk/walk-stream.ts`), with the same defaults.
 */
import { EMPTY_ANSWER_RETRY } from '../defaults.js';
import { MalformedResponseError } from '../errors.js';
import { delay } from './sync-logger.js';

/** How often, and after how long, an empty answer is asked again. Default `EMPTY_ANSWER_RETRY`. */
export interface EmptyRetry {
  retries?: number | undefined;
  delayMs?: number | undefined;
  signal?: AbortSignal | undefined;
}

/**
 * `ask(tries)` until `empty` says no, `retries` times at most after the first, pausing
 * `delayMs × 2^n` before each; then throws `MalformedResponseError` for `where` with `problem`.
 */
export async function askWhileEmpty<T>(
  input: EmptyRetry & {
    ask: (tries: number) => Promise<T>;
    empty: (answer: T) => boolean;
    where: string;
    problem: string;
  },
): Promise<T> {
  for (let tries = 0; ; tries++) {
    const answer = await input.ask(tries);
    if (!input.empty(answer)) return answer;
    if (tries >= (input.retries ?? EMPTY_ANSWER_RETRY.retries))
      throw new MalformedResponseError(input.where, input.problem, '');
    await delay((input.delayMs ?? EMPTY_ANSWER_RETRY.delayMs) * 2 ** tries, input.signal);
  }
}
