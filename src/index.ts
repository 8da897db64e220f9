/** The library's public surface: `import { createLedgerClient } from 'ledger-indexer'`. */
export * from './client/index.js';
export * from './config.js';
export { type Database, type Db, type OpenDatabaseOptions, openDatabase } from './db/connect.js';
export {
  type BundleItemRow,
  createTokenTagMatcher,
  deriveTokenTag,
  type EncodedTransaction,
  encodeTransaction,
  type TransactionRow,
} from './db/encode.js';
export { migrateDatabase } from './db/migrate.js';
export { createPgStore, type PgStoreOptions } from './db/store.js';
export {
  countNonFinal,
  countRejected,
  listStreams,
  type NonFinalCounts,
  recentRuns,
  type StreamStatus,
  type SyncRun,
} from './db/stream-queries.js';
export { type TokenWriteCounts, upsertTokens } from './db/tokens.js';
export { DEFAULT_RECHECK_POLICY, type RecheckPolicy } from './db/write-transactions.js';
export * from './errors.js';
export { createLogger, silentLogger } from './logger.js';
export {
  createSimulator,
  type GroundTruthRecord,
  type MalformedKind,
  type Simulator,
  type SimulatorFaults,
  type SimulatorOptions,
  type SimulatorStats,
} from './simulator/index.js';
export type {
  FetchByHash,
  FetchPage,
  PageCommit,
  StreamSpec,
  StreamState,
  SyncStore,
  WriteCounts,
} from './sync/ports.js';
