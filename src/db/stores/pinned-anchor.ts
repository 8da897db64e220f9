import { sql } from 'drizzle-orm';
import type { ServiceAnchor } from '../../errors.js';
import type { Database } from '../connect.js';
import { databaseOperation } from '../database-errors.js';
import type { Db } from '../drizzle-db.js';
import { queryRows, toDate } from '../rows.js';

/** The anchor pinned in `mirrored_service`, with where it was pinned from. */
export interface PinnedAnchor extends ServiceAnchor {
  /** The service's base URL at the time, password hidden. */
  serviceUrl: string;
  /** The base URL that last answered the anchor (password hidden), and when; absent before any. */
  verified?: { url: string; at: Date } | undefined;
}

/** The pinned anchor, or `null` when none is (an empty mirror, or one older than the table). */
export async function readPinnedAnchor(db: Db): Promise<PinnedAnchor | null> {
  const rows = await databaseOperation('mirrored-service', () =>
    queryRows<{
      raw_id: string;
      ledger_hash: string;
      service_url: string;
      verified_url: string | null;
      verified_at: unknown;
    }>(
      db,
      sql`SELECT anchor_raw_id::text AS raw_id, anchor_ledger_hash AS ledger_hash, service_url, verified_url, verified_at
          FROM mirrored_service WHERE id = 1`,
    ),
  );
  const row = rows[0];
  if (!row) return null;
  const at = toDate(row.verified_at);
  return {
    rawId: Number(row.raw_id),
    ledgerHash: row.ledger_hash,
    serviceUrl: row.service_url,
    verified: row.verified_url !== null && at !== null ? { url: row.verified_url, at } : undefined,
  };
}

/** Notes that the service at `url` answered the anchor at `at`. */
export async function markVerified(db: Db, url: string, at: Date): Promise<void> {
  await databaseOperation('mirrored-service', () =>
    db.execute(sql`UPDATE mirrored_service SET verified_url = ${url}, verified_at = ${at.toISOString()}::timestamptz
                   WHERE id = 1`),
  );
}

/** The stored record with the lowest rawId (one primary-key step), or `null` when none is stored. */
export async function lowestStoredRecord(db: Db): Promise<ServiceAnchor | null> {
  const rows = await databaseOperation('mirrored-service', () =>
    queryRows<{ raw_id: string; ledger_hash: string }>(
      db,
      // Ordered by the column, not by the output alias of the same name (its text): one step
      // down the primary key, and the lowest by number (rawId 9 before 10).
      sql`SELECT raw_id::text AS raw_id, ledger_hash FROM ledger_transactions
          ORDER BY ledger_transactions.raw_id LIMIT 1`,
    ),
  );
  const row = rows[0];
  return row ? { rawId: Number(row.raw_id), ledgerHash: row.ledger_hash } : null;
}

/**
 * Pins `anchor` as the mirror's service. `replace: false` keeps an anchor pinned meanwhile (two
 * runs of one service pin at once); `true` replaces it (the operator adopted another service).
 */
export async function pinAnchor(db: Db, anchor: PinnedAnchor, options: { replace: boolean }): Promise<void> {
  const onConflict = options.replace
    ? sql`DO UPDATE SET anchor_raw_id = excluded.anchor_raw_id,
            anchor_ledger_hash = excluded.anchor_ledger_hash,
            service_url = excluded.service_url, pinned_at = excluded.pinned_at`
    : sql`DO NOTHING`;
  await databaseOperation('mirrored-service', () =>
    db.execute(sql`INSERT INTO mirrored_service (id, anchor_raw_id, anchor_ledger_hash, service_url, pinned_at)
                   VALUES (1, ${anchor.rawId}, ${anchor.ledgerHash}, ${anchor.serviceUrl}, now())
                   ON CONFLICT (id) ${onConflict}`),
  );
}

/**
 * Empties the mirror: drops every table, view and the migration history, then the caller
 * migrates again. For the demo's own data folder only, when it holds a mirror of another ledger.
 */
export async function dropMirror(database: Database): Promise<void> {
  await databaseOperation('reset', () =>
    database.withConnection(async (db) => {
      await db.execute(sql`DROP SCHEMA IF EXISTS drizzle CASCADE`);
      await db.execute(sql`DROP SCHEMA public CASCADE`);
      await db.execute(sql`CREATE SCHEMA public`);
    }),
  );
}
