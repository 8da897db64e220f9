/** The reference ledger server: `createSimulator` and its types. */

export type { PagingMode } from '../service-query/key-query.js';
export { checksumAddress, keccak256, personalMessageHash, signedMessage } from './evm.js';
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
