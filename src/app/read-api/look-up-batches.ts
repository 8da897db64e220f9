/**
 * How the read API reads the records of look-ups on a pool of read-only sessions: under load,
 * the look-ups waiting go together, one statement for all of them (`batchedRead`). A statement a
 * look-up cost `serve` a round trip, a socket write and a parse each, and PostgreSQL a statement
 * each; gathered, the two cores serve more look-ups (docs/performance.md). A look-up alone is still
 * sent at once.
 */
import { type LookUpBy, selectLookUps } from '../../db/queries/read-api/one-record.js';
import type { RecordRow } from '../../db/queries/read-api/record-rows.js';
import type { Executor } from '../../db/rows.js';
import { batchedRead } from '../shared-read.js';

/** Reads the record a hash names, undefined where none is stored. */
export type LookUpReader = (by: LookUpBy, hash: string) => Promise<RecordRow | undefined>;

/**
 * Statements of look-ups at once: two of the read API's four connections, the others left to the
 * lists and the coverage reads.
 */
export const LOOK_UPS_IN_FLIGHT = 2;

/** Hashes one statement asks at most: its answer stays a few hundred kB. */
export const LOOK_UPS_A_STATEMENT = 100;

/** A {@link LookUpReader} of `db` whose look-ups of one kind asked meanwhile go in one statement. */
export function batchedLookUps(db: Executor): LookUpReader {
  const options = { inFlight: LOOK_UPS_IN_FLIGHT, most: LOOK_UPS_A_STATEMENT };
  const gathered = (by: LookUpBy) =>
    batchedRead((hashes: string[]) => selectLookUps(db, by, hashes), options);
  const readers = { ledgerHash: gathered('ledgerHash'), mintChainHash: gathered('mintChainHash') };
  return (by, hash) => readers[by](hash);
}

/** A {@link LookUpReader} that reads each look-up on its own, in `db` (a transaction). */
export function lookUpsAlone(db: Executor): LookUpReader {
  return async (by, hash) => (await selectLookUps(db, by, [hash]))[0];
}
