import type { PgDatabase, PgQueryResultHKT } from 'drizzle-orm/pg-core';

/** A Drizzle database usable over both drivers; every query of `src/db` is written once for both. */
export type Db = PgDatabase<PgQueryResultHKT>;
