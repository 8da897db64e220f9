/** The reference ledger server: `createSimulator` and its types. */
export { checksumAddress, keccak256, personalMessageHash, signedMessage } from './evm.js';
export type { PagingMode } from './key-query.js';
export { createSimulator } from './simulator.js';
export type {
  GroundTruthRecord,
  ListRequestStats,
  MalformedKind,
  Simulator,
  SimulatorFaults,
  SimulatorOptions,
  SimulatorStats,
} from './types.js';
