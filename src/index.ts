/**
 * The library's public surface (`import { createLedgerClient } from 'ledger-indexer'`): the
 * client of the ledger service, the reference simulator, and the one-shot sync into PostgreSQL
 * or PGlite (`createContext` opens and migrates the database, `syncOnce` runs a sync), with their
 * configuration, types and errors. Everything else is internal and may change.
 */

export { type AppContext, type CreateContextOptions, createContext } from './app/context.js';
export { type SyncContext, type SyncOptions, type SyncResult, syncOnce } from './app/sync-once.js';
export { DEFAULT_PATHS, type EndpointName, type ToolName } from './client/api-paths.js';
export * from './client/api-types.js';
export type { CallOptions, ToolCall, ToolCallOptions } from './client/call-options.js';
export { isNotFound } from './client/http.js';
export type { ClientStats } from './client/http-types.js';
export { createLedgerClient, type LedgerClient, type TxsAfterQuery } from './client/ledger-client.js';
export { clientOptionsFromConfig, type LedgerClientOptions } from './client/options.js';
export {
  createRequestBudget,
  type RequestBudget,
  type RequestBudgetOptions,
} from './client/request-budget.js';
export { type Config, loadConfig } from './config.js';
export type { Database } from './db/connect.js';
export type { StreamSpec } from './domain/stream-key.js';
export * from './errors.js';
export { createLogger, type Logger, silentLogger } from './logger.js';
export {
  createSimulator,
  type GroundTruthRecord,
  type MalformedKind,
  type Simulator,
  type SimulatorFaults,
  type SimulatorOptions,
  type SimulatorStats,
} from './simulator/index.js';
export type { RereadResult, RereadResult as ReconcileResult } from './sync/reread/reread-pending.js';
export type { PageEvent, WalkResult } from './sync/walk/walk-types.js';
