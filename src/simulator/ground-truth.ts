import { lastAtMost } from './columns.js';
import type { FaultInjector } from './faults.js';
import type { SimulatedLedger } from './ledger.js';
import type { GroundTruthRecord } from './types.js';

/**
 * Every record the service shows now, in rawId order, as objects or as JSON lines: a late record
 * is left out until it is visible (the caller first makes visible those due).
 */
export interface GroundTruth {
  records(opts?: { afterRawId?: number }): IterableIterator<GroundTruthRecord>;
  recordLines(afterRawId: number | undefined): IterableIterator<string>;
}

/** Reads the ledger's ground truth; records are marked malformed at the share in force. */
export function groundTruthOf(ledger: SimulatedLedger, injector: FaultInjector): GroundTruth {
  const firstAfter = (end: number, after: number | undefined): number =>
    after === undefined ? 0 : lastAtMost(end, (i) => ledger.table.rawId.get(i), after) + 1;
  return {
    *records(opts = {}) {
      const end = ledger.table.count;
      const faults = injector.faults;
      for (let pos = firstAfter(end, opts.afterRawId); pos < end; pos++)
        if (ledger.isVisible(pos)) yield ledger.groundTruth(pos, faults);
    },
    *recordLines(afterRawId) {
      const end = ledger.table.count;
      const faults = injector.faults;
      for (let pos = firstAfter(end, afterRawId); pos < end; pos++)
        if (ledger.isVisible(pos)) yield ledger.groundTruthText(pos, faults);
    },
  };
}
