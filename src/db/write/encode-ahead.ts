/**
 * Records encoded as soon as they are read, kept until their commit takes them: the commit's
 * statement then starts without waiting on the encoding, so the database works on one commit
 * while the next records are encoded. Pure; the clock is the caller's.
 */
import type { LedgerTx } from '../../domain/model.js';
import { InvalidRecordError } from '../../errors.js';
import { type EncodedTransaction, type EncodeOptions, encodeTransaction } from './encode.js';

/** Encodings made ahead, by record object. */
export interface EncodeAhead {
  /** Encodes `records` now (a record that cannot be encoded keeps its error for later). */
  ahead(records: readonly LedgerTx[]): void;
  /** The record's encoding made ahead (taken: a second call encodes again), else made now; throws its error. */
  encode(tx: LedgerTx): EncodedTransaction;
}

/** Creates an encode-ahead cache; `options()` gives the encoding options at the time of the call. */
export function createEncodeAhead(options: () => EncodeOptions): EncodeAhead {
  // Weak: records read but never committed (a failed range) are dropped with their answer.
  const made = new WeakMap<LedgerTx, EncodedTransaction | InvalidRecordError>();
  const encodeNow = (tx: LedgerTx, at: EncodeOptions): EncodedTransaction | InvalidRecordError => {
    try {
      return encodeTransaction(tx, at);
    } catch (error) {
      if (error instanceof InvalidRecordError) return error;
      throw error;
    }
  };
  return {
    ahead(records) {
      const at = options();
      for (const tx of records) made.set(tx, encodeNow(tx, at));
    },
    encode(tx) {
      const found = made.get(tx) ?? encodeNow(tx, options());
      made.delete(tx);
      if (found instanceof InvalidRecordError) throw found;
      return found;
    },
  };
}
