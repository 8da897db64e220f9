/** The library's public surface: `import { createLedgerClient } from 'ledger-indexer'`. */
export * from './client/index.js';
export * from './config.js';
export * from './errors.js';
export { createLogger, silentLogger } from './logger.js';
export type {
  FetchByHash,
  FetchPage,
  PageCommit,
  StreamSpec,
  StreamState,
  SyncStore,
  WriteCounts,
} from './sync/ports.js';
