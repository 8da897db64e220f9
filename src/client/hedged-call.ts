import type { HedgePolicy } from './hedge-policy.js';
import { type AbortLike, StopToken, sharedStop } from './stop-token.js';

/** Input of {@link runHedged}. */
export interface HedgedCall<T> {
  policy: HedgePolicy;
  /** Makes the request (with its own retries); must stop and reject when `signal` aborts. */
  call: (signal: AbortLike | undefined) => Promise<T>;
  /** The caller's signal: aborts every request of the call. */
  signal?: AbortLike | undefined;
  /** Told when a second request is sent, with the wait that preceded it. */
  onHedge?: ((delayMs: number) => void) | undefined;
}

/** Why the slower of two requests is aborted; never seen by callers. */
const LOST = new Error('another request for the same page answered first');

/**
 * Runs `call`, and when it has not answered within the policy's delay, runs it a second time
 * alongside: the first answer wins and the other request is aborted. A failure waits for the
 * other request, if one is running; the call fails when every request has failed, with the
 * first request's error. Each successful answer's time feeds the policy.
 */
export function runHedged<T>(input: HedgedCall<T>): Promise<T> {
  const { policy, call } = input;
  const outer = sharedStop(input.signal);
  const delayMs = policy.delayMs();
  if (delayMs === undefined) {
    // The plain path: no controllers, no timer.
    const began = performance.now();
    return call(outer).then((value) => {
      policy.record(performance.now() - began);
      return value;
    });
  }
  if (outer?.aborted) return Promise.reject(outer.reason);
  return new Promise<T>((resolve, reject) => {
    const branches: StopToken[] = [];
    const errors: unknown[] = [];
    let running = 0;
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const onAbort = (): void => {
      for (const branch of branches) branch.abort(outer?.reason);
    };
    const finish = (): void => {
      settled = true;
      clearTimeout(timer);
      outer?.removeEventListener('abort', onAbort);
    };
    const start = (index: number): void => {
      const token = new StopToken();
      branches.push(token);
      running += 1;
      const began = performance.now();
      call(token).then(
        (value) => {
          running -= 1;
          if (settled) return;
          policy.record(performance.now() - began);
          finish();
          for (const branch of branches) if (branch !== token) branch.abort(LOST);
          resolve(value);
        },
        (error: unknown) => {
          running -= 1;
          if (settled) return;
          errors[index] = error;
          if (running > 0) return;
          // Every request sent has failed, each after its own retries: no second chance now.
          finish();
          reject(errors[0] ?? error);
        },
      );
    };
    outer?.addEventListener('abort', onAbort, { once: true });
    timer = setTimeout(() => {
      timer = undefined;
      if (settled || outer?.aborted || !policy.takeHedge()) return;
      input.onHedge?.(delayMs);
      start(1);
    }, delayMs);
    start(0);
  });
}
