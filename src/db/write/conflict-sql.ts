/**
 * The conflict part of the page-write statement, built as SQL without I/O: which sightings
 * disagree with the version kept on the fields that never change, and their upsert into
 * `ledger_tx_conflicts`. Fixed identifiers only go into the raw fragments below.
 */
import { type SQL, sql } from 'drizzle-orm';
import { IMMUTABLE_COLUMNS } from '../schema/immutable-columns.js';

/** `(a.token_symbol, a.action, …)`: the immutable columns of the row `alias`, for row comparisons. */
export function immutableTuple(alias: string): SQL {
  return sql.raw(`(${IMMUTABLE_COLUMNS.map((c) => `${alias}.${c}`).join(', ')})`);
}

const DIFFERING = sql.raw(
  `array_remove(ARRAY[${IMMUTABLE_COLUMNS.map((c) => `CASE WHEN k.${c} IS DISTINCT FROM s.${c} THEN '${c}' END`).join(', ')}]::text[], NULL)`,
);
// One row per record and served version of its immutable fields: seen again, it is counted again.
const FINGERPRINT = sql.raw(
  `encode(sha256(convert_to(jsonb_build_array(s.raw_id, ${IMMUTABLE_COLUMNS.map((c) => `s.${c}`).join(', ')})::text, 'UTF8')), 'hex')`,
);
const SERVED_JSON = sql.raw(`to_jsonb(s) - 'pending' - 'page' - 'divergent'`);

/**
 * The CTEs `conflict` (one row per disagreeing sighting) and `conflicts_written`. They read the
 * CTEs `served` (every sighting, later disagreeing ones flagged `divergent`), `input` (the
 * version kept of each record), `old` (the stored rows of the input) and `clash` (records refused
 * for a `ledgerHash` stored under another rawId, left out here: they are rejected records).
 */
export function conflictCtes(input: {
  streamKey: string | null;
  /** An expression giving the `sync_runs` id of the page's run, or NULL. */
  runId: SQL;
  backfillId: string | null;
  now: string;
}): SQL {
  return sql`conflict AS (
      -- Sightings whose immutable fields differ from the version kept: the stored row, else (a
      -- record new to the table) its first sighting in this batch. Neither is overwritten.
      SELECT s.raw_id, s.page, s.divergent, ${DIFFERING} AS fields, to_jsonb(k) AS stored,
             ${SERVED_JSON} AS served, ${FINGERPRINT} AS fingerprint
      FROM served s JOIN old k ON k.raw_id = s.raw_id
      WHERE ${immutableTuple('k')} IS DISTINCT FROM ${immutableTuple('s')}
        AND s.raw_id NOT IN (SELECT raw_id FROM clash)
      UNION ALL
      SELECT s.raw_id, s.page, s.divergent, ${DIFFERING}, to_jsonb(k) - 'pending', ${SERVED_JSON}, ${FINGERPRINT}
      FROM served s JOIN input k ON k.raw_id = s.raw_id
      WHERE s.divergent
        AND s.raw_id NOT IN (SELECT raw_id FROM old) AND s.raw_id NOT IN (SELECT raw_id FROM clash)
        AND ${immutableTuple('k')} IS DISTINCT FROM ${immutableTuple('s')}
    ),
    conflicts_written AS (
      INSERT INTO ledger_tx_conflicts
        (fingerprint, raw_id, fields, stored, served, stream_key, page, run_id, backfill_id, detected_at, seen_at, seen_count)
      SELECT DISTINCT ON (c.fingerprint) c.fingerprint, c.raw_id, c.fields, c.stored, c.served,
             ${input.streamKey}::text, c.page, ${input.runId}, ${input.backfillId}::text,
             ${input.now}::timestamptz, ${input.now}::timestamptz, (count(*) OVER (PARTITION BY c.fingerprint))::int
      FROM conflict c
      ORDER BY c.fingerprint, c.page NULLS LAST
      ON CONFLICT (fingerprint) DO UPDATE SET
        served = excluded.served,
        seen_at = excluded.seen_at,
        seen_count = ledger_tx_conflicts.seen_count + excluded.seen_count
    )`;
}
