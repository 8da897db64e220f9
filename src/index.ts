/** The library's public surface: `import { createLedgerClient } from 'ledger-indexer'`. */
export * from './client/index.js';
export * from './config.js';
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
