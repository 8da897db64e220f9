/**
 * What can stop a request: the caller's `AbortSignal`, or a {@link StopToken}. Both work with
 * undici, the request budget and the retry waits.
 */
export interface AbortLike {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: () => void, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: () => void): void;
}

/**
 * A one-shot abort token for the client's own use: each request attempt has one (its deadline
 * and a lost hedge abort it). Node's `AbortController` would do, but creating its signal costs
 * about 15 µs of CPU, as much as the rest of a small request; this costs next to nothing.
 */
export class StopToken implements AbortLike {
  aborted = false;
  reason: unknown = undefined;
  private listeners: Array<() => void> | undefined;

  addEventListener(_type: 'abort', listener: () => void): void {
    if (this.listeners === undefined) this.listeners = [listener];
    else this.listeners.push(listener);
  }

  removeEventListener(_type: 'abort', listener: () => void): void {
    const index = this.listeners?.indexOf(listener) ?? -1;
    if (index >= 0) this.listeners?.splice(index, 1);
  }

  /** Aborts with `reason` and tells every listener once; later calls do nothing. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    const listeners = this.listeners;
    this.listeners = undefined;
    if (listeners) for (const listener of listeners) listener();
  }
}

/** The token standing in for each caller's signal (see {@link sharedStop}). */
const relays = new WeakMap<AbortLike, StopToken>();

/**
 * One token for every request of the client that `signal` stops: the caller's signal gets one
 * listener, however many requests, budget waits and retry waits listen meanwhile (the client
 * keeps up to its in-flight ceiling at once, and Node takes more than ten listeners on one
 * `AbortSignal` for a leak and warns on stderr). The client's own tokens are used as they are.
 */
export function sharedStop(signal: AbortLike | undefined): AbortLike | undefined {
  if (signal === undefined || signal instanceof StopToken) return signal;
  let relay = relays.get(signal);
  if (relay === undefined) {
    const token = new StopToken();
    if (signal.aborted) token.abort(signal.reason);
    else signal.addEventListener('abort', () => token.abort(signal.reason), { once: true });
    relays.set(signal, token);
    relay = token;
  }
  return relay;
}

/** Waits `ms`; an abort rejects with the signal's own reason. */
export function sleep(ms: number, signal?: AbortLike | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}
