import pg from 'pg';
import { DatabaseError } from '../errors.js';
import { classifyDatabaseFailure } from './database-errors.js';

type ConnectCallback = (
  error: Error | undefined,
  client: pg.PoolClient | undefined,
  done: (release?: unknown) => void,
) => void;

/**
 * A `pg` pool whose failures to hand out a connection say "cannot connect": pg reports a connect
 * timeout (a server that accepts and never answers, a frozen one) as a plain `Error`, which read
 * as "connection lost" though no connection was ever made. A failure with a network code or a
 * SQLSTATE keeps the meaning of its code. Queries that fail once connected are left as they are.
 */
export class ConnectingPool extends pg.Pool {
  override connect(): Promise<pg.PoolClient>;
  override connect(callback: ConnectCallback): void;
  override connect(callback?: ConnectCallback): Promise<pg.PoolClient> | undefined {
    const started = performance.now();
    const failure = (error: Error): DatabaseError =>
      connectFailure(error, performance.now() - started, this.options.connectionTimeoutMillis);
    if (callback === undefined) {
      return super.connect().catch((error: unknown) => {
        throw error instanceof Error ? failure(error) : error;
      });
    }
    super.connect((error, client, done) => callback(error ? failure(error) : error, client, done));
    return undefined;
  }
}

/**
 * What a failure to get a connection means: the code's meaning when it has one, else "cannot
 * connect", saying the deadline when it was reached (a connect timeout carries no code).
 */
export function connectFailure(
  error: Error,
  elapsedMs: number,
  timeoutMs: number | undefined,
): DatabaseError {
  const coded = classifyDatabaseFailure(error);
  if (coded !== undefined) return coded;
  // pg gives this refusal no code, only this text; it is a setting to change, not a server down.
  if (error.message === 'The server does not support SSL connections')
    return new DatabaseError({
      kind: 'access',
      words: 'the server does not accept TLS, which DATABASE_URL asks for (its sslmode)',
      cause: error,
    });
  const timedOut = timeoutMs !== undefined && timeoutMs > 0 && elapsedMs >= timeoutMs;
  return new DatabaseError({
    kind: 'connection',
    words: timedOut ? `cannot connect: no answer within ${timeoutMs} ms` : 'cannot connect',
    cause: error,
  });
}
