/**
 * Records known to hold only text PostgreSQL can store. A value holds a NUL or an unpaired
 * surrogate only when the JSON it was read from spells one: as a `\u` escape (at any depth of
 * JSON held in strings: an inner escape's backslash reaches the outer text as `\\u` or `\u005c`,
 * both of which hold `\u`) or as a raw surrogate (a raw NUL is not valid JSON). An answer whose
 * text has neither cannot yield such a value, so its records skip the per-value check when they
 * are encoded. A record from any other source, or from an answer that has either, is checked value
 * by value as before.
 */

import type { LedgerTx } from './model.js';

/** A raw surrogate: never present in a string V8 holds one byte a character, so this answers at once for those. */
const RAW_SURROGATE = /[\uD800-\uDFFF]/;

/**
 * The mark: an own property under a private symbol, neither enumerable nor writable, so a copy
 * (`{...tx}`, a structured clone) is unmarked and checked in full. Not a `WeakSet`: adding every
 * record read to one cost about a microsecond a record, and its entries more to collect.
 */
const SCREENED = Symbol('screened');

/** Whether JSON text can decode (at any depth) to no NUL and no unpaired surrogate: it holds no `\u` and no raw surrogate. */
export function screensClean(jsonText: string): boolean {
  return !jsonText.includes('\\u') && !RAW_SURROGATE.test(jsonText);
}

/**
 * Marks a record read from an answer {@link screensClean} passed. Records are not changed after they
 * are read; one that is would have to be read again to be marked.
 */
export function markScreened(tx: LedgerTx): void {
  Object.defineProperty(tx, SCREENED, { value: true });
}

/** Whether the record came from an answer whose text can hold no NUL and no unpaired surrogate. */
export function isScreened(tx: LedgerTx): boolean {
  return (tx as { [SCREENED]?: true })[SCREENED] === true;
}
