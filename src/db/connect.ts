import { resolve } from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import { drizzle as drizzlePglite } from 'drizzle-orm/pglite';
import type { PoolClient } from 'pg';
import { redactUrl } from '../config.js';
import type { Logger } from '../logger.js';
import { type CopyConnection, copyConnection } from './copy-connection.js';
import { pgliteOpenError, prepareDataFolder } from './data-folder.js';
import { toDatabaseError, translateDbErrors } from './database-errors.js';
import type { Db } from './drizzle-db.js';
import { lockDataFolder } from './folder-lock.js';
import { ConnectingPool } from './pool.js';

/**
 * An open database: PostgreSQL through a `pg` pool, or the embedded PGlite in a folder. Its
 * queries throw `DatabaseError` (one line, no SQL text or parameters) when the database fails.
 */
export interface Database {
  kind: 'postgres' | 'pglite';
  db: Db;
  /**
   * Runs `fn` on one dedicated connection, held for its whole duration (session-level state
   * such as advisory locks stays with it). PGlite has a single connection anyway.
   */
  withConnection<T>(fn: (db: Db) => Promise<T>): Promise<T>;
  /**
   * PostgreSQL only (PGlite has no COPY from a client stream): like {@link withConnection}, on a
   * connection that can also COPY rows in.
   */
  withCopyConnection?<T>(fn: (connection: CopyConnection) => Promise<T>): Promise<T>;
  /** A description safe to print: the URL without its password, or the data folder. */
  describe(): string;
  /**
   * A second handle on the same database for readers that must answer in time (the HTTP
   * surface): a small pool of its own whose connects and statements give up after `deadlines`,
   * so a frozen server costs them seconds, and the process's own pool (its writes) is left
   * alone. PGlite runs in the process and has one connection: the handle is this one, and
   * closing it closes nothing.
   */
  bounded(
    deadlines: DatabaseDeadlines & { maxConnections: number; readOnly?: boolean | undefined },
  ): Database;
  /**
   * Every session of this handle is read-only (`default_transaction_read_only`) and its statements
   * time out (`statement_timeout`): a lone statement needs no transaction of its own to be both.
   * PostgreSQL opened `readOnly` with a statement deadline; never PGlite (its one connection writes).
   */
  readonly readOnlySessions: boolean;
  close(): Promise<void>;
}

/** How long a bounded pool waits (see {@link Database.bounded}). */
export interface DatabaseDeadlines {
  /** For a connection (a new one, or a free one of a full pool). */
  connectMs: number;
  /**
   * For a statement: the server cancels it past this (`statement_timeout`), and a server that
   * does not answer at all (frozen) has its connection dropped a little later.
   */
  statementMs: number;
}

/** Options of {@link openDatabase}. */
export interface OpenDatabaseOptions {
  /** PostgreSQL connection string; absent: the embedded PGlite in {@link dataDir}. */
  databaseUrl?: string | undefined;
  /** Folder of the embedded database. Default `./.ledger-indexer`. */
  dataDir?: string | undefined;
  logger?: Logger | undefined;
  /** Largest number of pooled PostgreSQL connections. Default 10. */
  maxConnections?: number | undefined;
  /** Every transaction read-only (`default_transaction_read_only`), for commands that only look. Default false. */
  readOnly?: boolean | undefined;
  /** Deadlines of connects and statements. Default: 10 s to connect, statements unbounded. */
  deadlines?: DatabaseDeadlines | undefined;
}

/** How much later than `statement_timeout` a server that does not answer has its connection dropped. */
const FROZEN_GRACE_MS = 500;

/**
 * Opens the database: `pg` + `drizzle-orm/node-postgres` when a URL is given, else PGlite
 * (real PostgreSQL in WebAssembly) persisted in the data folder. Does not migrate: call
 * `migrateDatabase` for that. A PostgreSQL pool connects lazily, so an unreachable server
 * shows on first use. A data folder that cannot be created, written or opened throws
 * `DataFolderError` (one line naming the folder).
 */
export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options);
  return openPglite(resolve(options.dataDir ?? './.ledger-indexer'), options);
}

function openPostgres(url: string, options: OpenDatabaseOptions): Database {
  const { deadlines } = options;
  const session = withSessionOptions(url, {
    readOnly: options.readOnly === true,
    statementTimeoutMs: deadlines?.statementMs,
  });
  const pool = new ConnectingPool({
    connectionString: session.connectionString,
    options: session.options,
    max: options.maxConnections ?? 10,
    connectionTimeoutMillis: deadlines?.connectMs ?? 10_000,
    // A frozen server never answers, not even the cancel of statement_timeout.
    query_timeout: deadlines === undefined ? undefined : deadlines.statementMs + FROZEN_GRACE_MS,
    application_name: 'ledger-indexer',
  });
  // An idle pooled connection dropped by the server must not crash the process.
  pool.on('error', (error) => {
    options.logger?.warn(
      { err: toDatabaseError(error, { operation: 'idle-connection', fromDriver: true }), database_url: url },
      'idle database connection failed',
    );
  });
  // Nor may one in use (in a transaction) when the server goes away: its query fails on its own,
  // and the pool drops the broken connection when it comes back.
  pool.on('connect', (client) => {
    client.on('error', (error) => {
      options.logger?.debug(
        {
          err: toDatabaseError(error, { operation: 'connection-in-use', fromDriver: true }),
          database_url: url,
        },
        'database connection in use failed',
      );
    });
  });
  const db = translateDbErrors(drizzlePg({ client: pool }) as unknown as Db);
  options.logger?.debug({ database_url: url }, 'database pool created');
  /** Runs `fn` on one client of the pool, held for its whole duration. */
  const withClient = async <T>(fn: (client: PoolClient) => Promise<T>): Promise<T> => {
    const client = await pool.connect().catch((error: unknown) => {
      throw toDatabaseError(error, { fromDriver: true });
    });
    let broken: Error | undefined;
    try {
      return await fn(client);
    } catch (error) {
      broken = error instanceof Error ? error : undefined;
      throw toDatabaseError(error);
    } finally {
      // A failed session may still hold session state (locks): discard it rather than reuse it.
      client.release(broken);
    }
  };
  return {
    kind: 'postgres',
    db,
    withConnection: (fn) =>
      withClient((client) => fn(translateDbErrors(drizzlePg({ client }) as unknown as Db))),
    withCopyConnection: (fn) => withClient((client) => fn(copyConnection(client))),
    describe: () => redactUrl(url),
    bounded: ({ maxConnections, readOnly, ...bounds }) =>
      openPostgres(url, {
        ...options,
        maxConnections,
        deadlines: bounds,
        readOnly: options.readOnly === true || readOnly === true,
      }),
    readOnlySessions: options.readOnly === true && deadlines !== undefined,
    close: () => pool.end(),
  };
}

/** The `sslmode`s pg treats as `verify-full` (without `uselibpqcompat`). */
const VERIFY_FULL_ALIASES: ReadonlySet<string> = new Set(['prefer', 'require', 'verify-ca']);

/**
 * The connection's `options` startup parameter, plus `plan_cache_mode=force_custom_plan`: page
 * writes are named prepared statements, and a generic plan made while a table was nearly empty
 * would keep scanning it whole once it is large. Custom plans are re-costed on every call and
 * still skip the parsing. And `jit=off`: the indexer's statements are short, but the planner's
 * estimate for some (the re-read queue's claim, with a subquery per claimed record) crosses
 * `jit_above_cost` on a large table, and every run then compiled it: over 100 ms a run on 100,000
 * records, to claim nothing. Options already in the URL are kept: they move from the URL into
 * the parameter, since `pg` lets a URL's own `options` replace the parameter (and ours with it).
 * An `sslmode` pg reads as `verify-full` is written so.
 */
function withSessionOptions(
  url: string,
  session: { readOnly: boolean; statementTimeoutMs: number | undefined },
): { connectionString: string; options: string } {
  let existing = '';
  let connectionString = url;
  try {
    const parsed = new URL(url);
    existing = parsed.searchParams.get('options') ?? '';
    if (parsed.searchParams.has('options')) parsed.searchParams.delete('options');
    // pg reads these modes as verify-full, and says so in an eight-line warning on every start:
    // spelled as what they mean, they connect exactly as before, without it.
    const sslmode = parsed.searchParams.get('sslmode');
    if (sslmode !== null && VERIFY_FULL_ALIASES.has(sslmode) && !parsed.searchParams.has('uselibpqcompat'))
      parsed.searchParams.set('sslmode', 'verify-full');
    connectionString = parsed.toString() === new URL(url).toString() ? url : parsed.toString();
  } catch {
    // Not a URL (a key=value string): pg reads its own options from it; ours are added alone.
  }
  const readOnlyOption = session.readOnly ? ' -c default_transaction_read_only=on' : '';
  const timeout = session.statementTimeoutMs;
  const timeoutOption = timeout === undefined ? '' : ` -c statement_timeout=${timeout}`;
  return {
    connectionString,
    options:
      `${existing} -c plan_cache_mode=force_custom_plan -c jit=off${readOnlyOption}${timeoutOption}`.trim(),
  };
}

async function openPglite(dataDir: string, options: OpenDatabaseOptions): Promise<Database> {
  const { logger } = options;
  await prepareDataFolder(dataDir);
  // Before PGlite touches a file: one process at a time (folder-lock.ts).
  const lock = await lockDataFolder(dataDir);
  const client = await PGlite.create({ dataDir }).catch(async (error: unknown) => {
    await lock.release();
    throw pgliteOpenError(dataDir, error);
  });
  if (options.readOnly) await client.exec('set default_transaction_read_only = on');
  const db = translateDbErrors(drizzlePglite({ client }) as unknown as Db);
  logger?.debug({ data_dir: dataDir }, 'embedded database opened');
  let queue: Promise<unknown> = Promise.resolve();
  const database: Database = {
    kind: 'pglite',
    db,
    withConnection(fn) {
      // One connection: callers that want it to themselves take turns.
      const run = queue
        .then(() => fn(db))
        .catch((error: unknown) => {
          throw toDatabaseError(error);
        });
      queue = run.catch(() => undefined);
      return run;
    },
    describe: () => `embedded PostgreSQL in ${dataDir}`,
    bounded: () => ({ ...database, close: async () => undefined }),
    readOnlySessions: false,
    close: async () => {
      try {
        await client.close();
      } finally {
        await lock.release();
      }
    },
  };
  return database;
}
