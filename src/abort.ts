/** Small helpers for waiting that a signal or a deadline can end. */

/** A signal aborted, with its reason, as soon as any of `signals` is (absent ones left out). */
export function anySignal(signals: (AbortSignal | undefined)[]): AbortSignal {
  const controller = new AbortController();
  for (const signal of signals) {
    if (signal === undefined) continue;
    if (signal.aborted) {
      controller.abort(signal.reason);
      break;
    }
    signal.addEventListener('abort', () => controller.abort(signal.reason), { once: true });
  }
  return controller.signal;
}

/**
 * A signal aborted `ms` from now (a `TimeoutError`, as `AbortSignal.timeout` gives) or as soon as
 * `signal` is; `clear()` once the work is done stops the timer and lets go of `signal`. Not
 * `AbortSignal.any([signal, AbortSignal.timeout(ms)])`: on Node 20 the timeout signal inside may
 * be garbage-collected before it fires (nodejs/node#57736), and the wait then never ends.
 */
export function deadline(ms: number, signal?: AbortSignal): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const follow = (): void => controller.abort(signal?.reason);
  if (signal?.aborted) follow();
  else signal?.addEventListener('abort', follow, { once: true });
  // The timer holds the controller until it fires or is cleared; like `AbortSignal.timeout`'s, it
  // does not keep the process alive.
  const timer = setTimeout(
    () => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    ms,
  );
  timer.unref();
  return {
    signal: controller.signal,
    clear() {
      clearTimeout(timer);
      signal?.removeEventListener('abort', follow);
    },
  };
}

/**
 * A signal aborted `ms` after `signal` is, with the same reason: a second, harder stop for work
 * that got a chance to finish on its own first.
 */
export function delayedSignal(signal: AbortSignal, ms: number): AbortSignal {
  const controller = new AbortController();
  const later = (): void => {
    setTimeout(() => controller.abort(signal.reason), ms).unref();
  };
  if (signal.aborted) later();
  else signal.addEventListener('abort', later, { once: true });
  return controller.signal;
}

/** Resolves once `signal` aborts. */
export function whenAborted(signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
}

/**
 * `promise`, or a rejection with the signal's reason if it aborts first (the work behind
 * `promise` is not cancelled: the caller closes what runs it).
 */
export function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = (): void => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error);
      },
    );
  });
}

/** Whether `promise` settles within `ms` (it is not cancelled when it does not). */
export async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      promise.then(
        () => true as const,
        () => true as const,
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}
