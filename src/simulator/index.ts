/** The reference ledger server: `createSimulator` and its types. */
export { checksumAddress, keccak256, personalMessageHash } from './evm.js';
export { createSimulator } from './simulator.js';
export { signedMessage } from './submit-tx.js';
export type {
  GroundTruthRecord,
  MalformedKind,
  Simulator,
  SimulatorFaults,
  SimulatorOptions,
  SimulatorStats,
} from './types.js';
