/**
 * One PostgreSQL connection that can also `COPY … FROM STDIN` (pg-copy-streams): the fastest
 * way PostgreSQL takes rows in, for writes that know their rows are new (a backfill's ranges).
 */
import { finished } from 'node:stream/promises';
import { drizzle as drizzlePg } from 'drizzle-orm/node-postgres';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { translateDbErrors } from './database-errors.js';
import type { Db } from './drizzle-db.js';

/** A connection held for a whole unit of work: statements, and COPY of text rows. */
export interface CopyConnection {
  db: Db;
  /**
   * Runs `statement` (a `COPY … FROM STDIN` with fixed identifiers only) with `text` (COPY text
   * format in UTF-8, `copy-text.ts`) as its input; resolves to the rows copied.
   */
  copyIn(statement: string, text: Buffer): Promise<number>;
}

/** The {@link CopyConnection} of a client checked out of the pool. */
export function copyConnection(client: pg.PoolClient): CopyConnection {
  return {
    db: translateDbErrors(drizzlePg({ client }) as unknown as Db),
    async copyIn(statement, text) {
      const sink = client.query(copyFrom(statement));
      // The whole text as one chunk: no stream in front of it to pace.
      sink.end(text);
      await finished(sink);
      return sink.rowCount;
    },
  };
}
