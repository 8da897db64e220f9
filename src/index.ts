/** The library's public surface: `import { createLedgerClient } from 'ledger-indexer'`. */
export * from './client/index.js';
export * from './config.js';
export { type AppContext, type CreateContextOptions, createContext } from './context.js';
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
export { createProofStore } from './db/proof-store.js';
export { verifyStreams } from './db/proof-verify.js';
export { type ActivityRow, readActivity } from './db/report.js';
export { readSyncStatus, type SyncStatus } from './db/status.js';
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
export { createRedisConnection } from './queue/connection.js';
export { type JobName, type JobPayloads, parseJobPayload, QUEUE_NAMES } from './queue/jobs.js';
export { type QueueCounts, queueStatus, readQueueStatus } from './queue/queue-status.js';
export { createLedgerQueues, DEFAULT_PREFIX, type LedgerQueues } from './queue/queues.js';
export { createSharedRequestBudget, type SharedRequestBudget } from './queue/request-budget.js';
export { listSchedules, registerSchedules, type ScheduleOptions } from './queue/schedules.js';
export { startWorkers } from './queue/worker-runner.js';
export {
  createSimulator,
  type GroundTruthRecord,
  type MalformedKind,
  type Simulator,
  type SimulatorFaults,
  type SimulatorOptions,
  type SimulatorStats,
} from './simulator/index.js';
export * from './sync/completeness.js';
export { judgeStream, type StreamCompleteness } from './sync/completeness-report.js';
export { isEmptyPage, linkPages, pageRawIds } from './sync/page-links.js';
export {
  type BackfillRun,
  type BackfillStore,
  checkBackfill,
  fetchRange,
  planBackfill,
  type RangeTask,
} from './sync/parallel-backfill.js';
export type {
  FetchByHash,
  FetchPage,
  PageCommit,
  StreamSpec,
  StreamState,
  SyncStore,
  WriteCounts,
} from './sync/ports.js';
export { type ReconcileInput, type ReconcileResult, reconcilePending } from './sync/reconcile.js';
export { streamKey } from './sync/stream-key.js';
export { quietLogger, type SyncLogger } from './sync/sync-logger.js';
export {
  type SyncContext,
  type SyncOptions,
  type SyncResult,
  streamSpecs,
  syncOnce,
} from './sync/sync-once.js';
export { type PageEvent, type WalkResult, type WalkStreamInput, walkStream } from './sync/walk-stream.js';
