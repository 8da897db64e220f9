import type { ServiceAnchor } from '../errors.js';
import type { LedgerTx } from './model.js';

/**
 * Whether a service knows the mirror's anchor: `served` is what it answered for the anchor's
 * `ledgerHash` (`null` for a 404). Only fields that never change after first sight are compared
 * (the record's status, batch id and timestamp do change), so a service that keeps its records
 * always passes, however far it has grown since.
 */
export function servesAnchor(anchor: ServiceAnchor, served: LedgerTx | null): boolean {
  return (
    served !== null &&
    served.rawId === anchor.rawId &&
    served.ledgerHash.toLowerCase() === anchor.ledgerHash.toLowerCase()
  );
}

/** The record of `txs` with the lowest rawId, as an anchor; `undefined` for no record. */
export function lowestAnchor(txs: readonly LedgerTx[]): ServiceAnchor | undefined {
  let lowest: LedgerTx | undefined;
  for (const tx of txs) if (lowest === undefined || tx.rawId < lowest.rawId) lowest = tx;
  return lowest === undefined ? undefined : { rawId: lowest.rawId, ledgerHash: lowest.ledgerHash };
}
