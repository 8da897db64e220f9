/**
 * The re-read write: records read again, written inside the caller's transaction (which also
 * stores what was refused and reschedules the re-read queue, see `reread-store.ts`): the rows,
 * their conflicts, status history and bundle items, and nothing of a stream. SQL without I/O.
 */
import { type SQL, sql } from 'drizzle-orm';
import { type RecordWriteInput, recordWriteCtes, writeResult } from './record-write-sql.js';

/** Input of {@link buildRereadWrite}. */
export interface RereadWriteInput extends Pick<RecordWriteInput, 'records'> {
  now: Date;
}

/** The re-read write's statement; its result row is {@link writeResult}'s. */
export function buildRereadWrite(input: RereadWriteInput): SQL {
  const records = recordWriteCtes({
    records: input.records,
    streamKey: null,
    runId: sql`NULL::bigint`,
    backfillId: null,
    now: input.now.toISOString(),
    fenced: false,
  });
  return sql`
    WITH ${records}
    ${writeResult({ fenced: false, synchronousCommit: null })}
  `;
}
