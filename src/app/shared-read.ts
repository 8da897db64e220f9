/**
 * Sharing one read among concurrent HTTP requests, and bounding how long a request waits for it:
 * a burst of scrapes or page loads costs the database one computation, and a frozen database
 * costs each request a few seconds, not a hang.
 */
import { LedgerIndexerError } from '../errors.js';

/**
 * `compute` shared by its callers: one call at a time runs it, every caller meanwhile gets that
 * call's outcome, and callers within `reuseMs` after it settled get it again (a failure too, so a
 * burst against a database that is down does not try it once per request).
 */
export function sharedRead<T>(
  compute: () => Promise<T>,
  options: { reuseMs: number; now?: (() => number) | undefined },
): () => Promise<T> {
  const now = options.now ?? (() => performance.now());
  let current: { outcome: Promise<T>; settledAt: number | null } | null = null;
  return () => {
    const fresh =
      current !== null && (current.settledAt === null || now() - current.settledAt < options.reuseMs);
    if (current !== null && fresh) return current.outcome;
    const entry: { outcome: Promise<T>; settledAt: number | null } = {
      outcome: compute(),
      settledAt: null,
    };
    const settle = () => {
      entry.settledAt = now();
    };
    entry.outcome.then(settle, settle);
    current = entry;
    return entry.outcome;
  };
}

/**
 * Reads of one key each gathered into reads of many: at most `inFlight` run at once; a key asked
 * while they all run waits, and every key waiting then goes in the next read (at most `most` of
 * them). At low load a key is read alone at once; under load one statement answers many requests,
 * where one each cost a round trip and a parse apiece. `readMany` answers its keys in order.
 */
export function batchedRead<K, V>(
  readMany: (keys: K[]) => Promise<V[]>,
  options: { inFlight: number; most: number },
): (key: K) => Promise<V> {
  const waiting: Array<{ key: K; resolve: (value: V) => void; reject: (error: unknown) => void }> = [];
  let running = 0;
  const drain = (): void => {
    while (running < options.inFlight && waiting.length > 0) {
      const batch = waiting.splice(0, options.most);
      running++;
      // Its place is free before its callers go on: a key they ask next may be read at once.
      const settle = (deliver: () => void): void => {
        running--;
        deliver();
        drain();
      };
      readMany(batch.map((w) => w.key)).then(
        (values) =>
          settle(() => {
            for (const [i, w] of batch.entries()) w.resolve(values[i] as V);
          }),
        (error: unknown) =>
          settle(() => {
            for (const w of batch) w.reject(error);
          }),
      );
    }
  };
  return (key) =>
    new Promise<V>((resolve, reject) => {
      waiting.push({ key, resolve, reject });
      drain();
    });
}

/** A read of the HTTP surface took longer than its deadline; the request is answered without it. */
export class ReadDeadlineError extends LedgerIndexerError {
  readonly deadlineMs: number;

  constructor(deadlineMs: number) {
    super(`the database gave no answer within ${deadlineMs} ms`, { retryable: true });
    this.deadlineMs = deadlineMs;
  }
}

/**
 * `work`'s outcome, or a {@link ReadDeadlineError} once `deadlineMs` has passed. The work goes on
 * meanwhile: the surface's own pool bounds it (see `Database.bounded`).
 */
export async function withinDeadline<T>(work: Promise<T>, deadlineMs: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new ReadDeadlineError(deadlineMs)), deadlineMs);
  });
  work.catch(() => undefined);
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}
