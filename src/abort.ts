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
