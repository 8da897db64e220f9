import { createLedgerClient, type LedgerClient } from '../client/ledger-client.js';
import { clientOptionsFromConfig } from '../client/options.js';
import type { RequestBudget } from '../client/request-budget.js';
import { type Config, redactUrl } from '../config.js';
import { type Database, openDatabase } from '../db/connect.js';
import { createDeferredIndexes } from '../db/schema/deferred-indexes.js';
import { migrateDatabase } from '../db/schema/migrate-database.js';
import { createBackfillStore } from '../db/stores/pg-backfill-store.js';
import { createPgStore, type PgStoreOptions } from '../db/stores/pg-sync-store.js';
import { tokensListedAt, upsertTokens } from '../db/stores/tokens.js';
import type { CopyEncoder } from '../db/write/copy-encoding.js';
import { loadFastKeccak } from '../domain/keccak.js';
import type { LedgerToken } from '../domain/model.js';
import type { Logger } from '../logger.js';
import type { Metrics, WriteObserver } from '../metrics/index.js';

import type { BackfillStore } from '../sync/ports/backfill-store.js';
import type { DeferredIndexes } from '../sync/ports/read-indexes.js';
import type { SyncStore } from '../sync/ports/sync-store.js';
import { createCopyEncoder, defaultEncoderThreads } from './encoding/copy-encoder.js';
import { observeBackfillStore, observeSyncStore } from './instrumented-store.js';
import { createListDialects, type ListDialects } from './list-dialect.js';
import { createMirroredService, type MirroredService } from './mirrored-service.js';

/**
 * Everything a sync needs, built once from the configuration and handed to `syncOnce`, queue
 * jobs and commands. Close it when done: it holds the database and the HTTP connections.
 */
export interface AppContext {
  config: Config;
  logger: Logger;
  client: LedgerClient;
  database: Database;
  store: SyncStore;
  /** The read-side indexes a first backfill builds at its end. */
  indexes: DeferredIndexes;
  /** The proven ranges of backfills in parallel (range jobs, lanes by key). */
  backfills: BackfillStore;
  /** Which service the mirror holds: refuses to fill it from another one. */
  service: MirroredService;
  /** The dialect of the list reads, kept across runs. */
  dialects: ListDialects;
  /** Told what each commit wrote, when metrics are kept (the worker wraps its backfill store with it). */
  writes: WriteObserver | undefined;
  /** Stores the tokens of `/info` (tags, symbols, decimals). */
  saveTokens(tokens: LedgerToken[]): Promise<unknown>;
  /** When `/info` was last stored; `null` when never. */
  tokensListedAt(): Promise<Date | null>;
  close(): Promise<void>;
}

/** Options of {@link createContext}. */
export interface CreateContextOptions {
  config: Config;
  logger: Logger;
  /** Apply pending migrations first. Default true. */
  migrate?: boolean;
  /** Re-read schedule of non-final records (tests shorten it). Default: the configuration's, else the store's. */
  reread?: PgStoreOptions['reread'];
  /** @deprecated The former name of {@link reread}; `reread` wins where both are given. */
  recheck?: PgStoreOptions['reread'];
  /** An open database to use instead of opening one from the configuration; not closed by `close()`. */
  database?: Database;
  /**
   * The budget every request of the client takes from, retries included (the workers' one in
   * Redis). Default: the client's own, at `requestsPerSecond`.
   */
  budget?: RequestBudget | undefined;
  /** Where the client's requests and the store's writes are counted. Default: nowhere. */
  metrics?: Pick<Metrics, 'client' | 'writes'> | undefined;
  /**
   * Encodes walks by key for their COPY off the main thread; closed with the context. Default:
   * threads (`createCopyEncoder`) on PostgreSQL; `null`: on the main thread.
   */
  copyEncoder?: CopyEncoder | null | undefined;
}

/**
 * Opens the database (PostgreSQL from `DATABASE_URL`, else PGlite in the data folder), migrates
 * it, and creates the client and the store. Throws `ConfigError` when the base URL is missing.
 */
export async function createContext(options: CreateContextOptions): Promise<AppContext> {
  const { config, logger } = options;
  // Every record written is hashed: the fast keccak is ready before the first page.
  await loadFastKeccak();
  const client = createLedgerClient({
    ...clientOptionsFromConfig(config, logger),
    budget: options.budget,
    observer: options.metrics?.client,
  });
  let database: Database;
  try {
    database =
      options.database ??
      (await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, logger }));
  } catch (error) {
    await client.close();
    throw error;
  }
  try {
    if (options.migrate !== false) await migrateDatabase(database);
  } catch (error) {
    await client.close();
    if (!options.database) await database.close();
    throw error;
  }
  const reread = {
    recheckAfterMs: config.recheckAfterMs,
    stragglerAgeMs: config.stragglerAgeMs,
    ...options.recheck,
    ...options.reread,
  };
  const pgStore = createPgStore({ database, logger, reread, checkSignatures: config.checkSignatures });
  const writes = options.metrics?.writes;
  const store = writes === undefined ? pgStore : observeSyncStore(pgStore, writes);
  // Threads start with the first walk by key that copies its records in, if any does.
  // A machine of one core encodes each commit's records on its one thread, when it writes them.
  const copyEncoder = !database.withCopyConnection
    ? undefined
    : options.copyEncoder === undefined
      ? defaultEncoderThreads() > 0
        ? createCopyEncoder({ logger })
        : undefined
      : (options.copyEncoder ?? undefined);
  const backfillStore = createBackfillStore({
    database,
    checkSignatures: config.checkSignatures,
    reread,
    logger,
    copyEncoder,
  });
  const backfills = writes === undefined ? backfillStore : observeBackfillStore(backfillStore, writes);
  return {
    // The embedded database has one connection: its writes are one at a time whatever is asked.
    config: database.kind === 'pglite' ? { ...config, writers: 1 } : config,
    logger,
    client,
    database,
    store,
    indexes: createDeferredIndexes({ database, logger }),
    backfills,
    service: createMirroredService({
      db: database.db,
      client,
      serviceUrl: redactUrl(config.ledgerBaseUrl ?? ''),
      logger,
    }),
    writes,
    saveTokens: async (tokens) => {
      return upsertTokens(database, tokens);
    },
    tokensListedAt: () => tokensListedAt(database),
    dialects: createListDialects({ client, db: database.db, paging: config.ledgerPaging }),
    async close() {
      await copyEncoder?.close();
      await client.close();
      if (!options.database) await database.close();
    },
  };
}
