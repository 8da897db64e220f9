/**
 * The logging the sync engine needs, as a structural type so `src/sync` does not import pino.
 * A pino `Logger` satisfies it; so does {@link quietLogger}.
 */
export interface SyncLogger {
  debug(object: object, message?: string): void;
  info(object: object, message?: string): void;
  warn(object: object, message?: string): void;
  error(object: object, message?: string): void;
}

/** A logger that drops everything: the default when a caller brings none. */
export const quietLogger: SyncLogger = {
  debug() {},
  info() {},
  warn() {},
  error() {},
};

/** Resolves after `ms`, or rejects with the signal's reason as soon as it aborts. */
export function delay(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** One line describing a thrown value, for logs and the stream's last error. */
export function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
