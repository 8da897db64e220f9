/**
 * The named pieces every mode of the record write (page, range, re-read: `page-write-sql.ts`,
 * `range-write-sql.ts`, `reread-write-sql.ts`) builds its one statement from, as SQL without I/O:
 * the records as rows, their conflicts, the row writes, the status history, the bundle items,
 * the re-read queue, the rejected records refused for a taken hash, and the result row. The rows
 * travel as one jsonb parameter.
 */
import { type SQL, sql } from 'drizzle-orm';
import { BUNDLE_ITEM_COLUMNS, RECORD_COLUMNS, type WrittenColumn } from '../schema/transaction-columns.js';
import { textArray } from '../text-array.js';
import { conflictCtes, immutableTuple } from './conflict-sql.js';
import type { EncodedTransaction } from './encode.js';
import { type RejectedRow, rejectedFingerprint, rejectedSource } from './rejected-rows.js';
import type { RereadPolicy } from './reread-queue.js';

const COLUMNS = RECORD_COLUMNS.map((c) => c.name);

/**
 * The select list that reads element `e` of the rows' JSON array (each row an array of values,
 * in `columns`' order) as typed columns: `e->>i` is the value's text, cast to the column's type;
 * a jsonb column keeps its JSON as it is (a JSON null is SQL NULL).
 */
function elementColumns(columns: readonly WrittenColumn<string>[]): string {
  return columns
    .map((column, i) => {
      if (column.sqlType === 'jsonb') return `nullif(e->${i}, 'null'::jsonb) AS ${column.name}`;
      if (column.sqlType === 'text') return `e->>${i} AS ${column.name}`;
      return `(e->>${i})::${column.sqlType} AS ${column.name}`;
    })
    .join(', ');
}

// Fixed identifiers only: no value ever goes into these strings. The values travel as one jsonb
// parameter, an array of rows each an array of values: JSON.stringify is native, and PostgreSQL
// reads it faster than one text[] literal a column (measured: about half the Node CPU and two
// thirds of PostgreSQL's time for 800 records).
const SERVED_COLUMNS: readonly WrittenColumn<string>[] = [
  ...RECORD_COLUMNS,
  { name: 'pending', sqlType: 'text' },
  { name: 'page', sqlType: 'integer' },
  { name: 'divergent', sqlType: 'boolean' },
];
const SERVED_SELECT = sql.raw(elementColumns(SERVED_COLUMNS));
const COLUMN_LIST = sql.raw(COLUMNS.join(', '));
const DATA_COLUMNS = COLUMNS.filter((c) => c !== 'raw_id');
const SELECT_LIST = sql.raw(COLUMNS.map((c) => (c === 'token_tag' ? 'i.matched_tag' : `i.${c}`)).join(', '));
// Check outcomes a write may lack (signatures not checked this time): a stored outcome stays.
const KEPT_WHEN_NULL: ReadonlySet<string> = new Set(['signature_check']);
const newValue = (c: string, value: string, stored: string): string =>
  KEPT_WHEN_NULL.has(c) ? `coalesce(${value}, ${stored}.${c})` : value;
// A record's values as it would be written over the stored row `stored` (an alias).
const taggedColumn = (c: string, stored = 't'): string =>
  newValue(c, c === 'token_tag' ? 'i.matched_tag' : `i.${c}`, stored);
const TAGGED_SET = sql.raw(DATA_COLUMNS.map((c) => `${c} = ${taggedColumn(c)}`).join(', '));
/** Whether the record differs from the stored row `stored` (an alias) in any written column. */
const differsFromStored = (stored: string): SQL =>
  sql.raw(
    `(${DATA_COLUMNS.map((c) => `${stored}.${c}`).join(', ')}) IS DISTINCT FROM (${DATA_COLUMNS.map((c) => taggedColumn(c, stored)).join(', ')})`,
  );

/**
 * Why a record is refused when another rawId already stores its `ledgerHash` (the reason its
 * rejected row keeps), over the `clash` CTE's `i` (the record) and `t` (the stored one): written
 * here only, and read back by `writeTransactions`.
 */
const CLASH_REASON = sql.raw(
  `'ledgerHash ' || i.ledger_hash || ' is already stored under rawId ' || t.raw_id`,
);

/**
 * The `ledger_tokens` tags by their lower case, the first of each: a record's tag that matches no
 * tag exactly takes the one matching it case-insensitively (`tagged` here, `matchedTags`).
 */
export const FOLDED_TAGS = sql.raw(
  'SELECT DISTINCT ON (lower(tag)) lower(tag) AS folded, tag FROM ledger_tokens ORDER BY lower(tag), tag',
);

/**
 * The `ledger_tokens` tag each of `tags` (records' derived tags) is stored with, by the rule of
 * the `tagged` rows: the exact tag, else the one matching it case-insensitively, else itself.
 * Rows `derived`, `matched`.
 */
export function matchedTags(tags: readonly string[]): SQL {
  return sql`WITH folded_tags AS (${FOLDED_TAGS})
    SELECT d.tag AS derived, coalesce(exact.tag, folded.tag, d.tag) AS matched
    FROM unnest(${textArray(tags)}::text[]) AS d(tag)
    LEFT JOIN ledger_tokens exact ON exact.tag = d.tag
    LEFT JOIN folded_tags folded ON folded.folded = lower(d.tag)`;
}

/** A record to write, with the page that served it. */
export interface ServedRecord extends EncodedTransaction {
  /** The page it was served on; null or absent when unknown (re-reads). */
  page?: number | null | undefined;
}

/** What every mode writes: the records, and where they were served. */
export interface RecordWriteInput {
  /** One per rawId. */
  records: readonly ServedRecord[];
  /** Later sightings of those records that disagree with them: recorded as conflicts only. */
  divergent?: readonly ServedRecord[] | undefined;
  /** The stream the records were served for (conflicts note it); null for re-reads. */
  streamKey: string | null;
  /** An expression giving the `sync_runs` id of the page's run, or NULL. */
  runId: SQL;
  /** The parallel backfill the records were served for, or null. */
  backfillId: string | null;
  /** ISO time of the write. */
  now: string;
  /** Whether the records are written only once the `fenced` CTE (before them) has a row. */
  fenced: boolean;
  /**
   * The records are taken to be stored nowhere yet, under their rawIds or their ledger hashes,
   * and are not looked up (a sixth of the statement's time). A record stored after all makes the
   * insert fail with a unique violation and writes nothing; the caller then writes the batch
   * again without the assumption.
   */
  assumeNew?: boolean | undefined;
}

/**
 * The records' part of the statement, the same in every mode: `served`, `input`, `tagged`, `old`
 * and `clash` (the rows), `conflict` and `conflicts_written`, `fresh`, `changed` and `upserted`
 * (the row writes), `history`, and the bundle items. A mode adds its own CTEs after it.
 */
export function recordWriteCtes(input: RecordWriteInput): SQL {
  const conflicts = conflictCtes({
    streamKey: input.streamKey,
    runId: input.runId,
    backfillId: input.backfillId,
    now: input.now,
  });
  return sql`${servedCtes(input)},
    ${conflicts},
    ${rowWriteCtes(input.now, lookedUp(input))},
    ${historyCte(input.now)},
    ${bundleItemCtes(input.records)}`;
}

/**
 * The records as rows: `served` (every sighting, the divergent ones only take part in the
 * conflict check), `input` (one per rawId), `tagged` (with the `ledger_tokens` tag matching
 * theirs), `old` (their stored rows) and `clash` (those whose `ledgerHash` another rawId has, with the reason they are refused).
 */
function servedCtes(input: RecordWriteInput): SQL {
  const lookups = lookedUp(input);
  const divergent = input.divergent ?? [];
  const rows = divergent.length === 0 ? input.records : [...input.records, ...divergent];
  const elements = rows.map((r, i) => {
    const values: unknown[] = COLUMNS.map((c) => r.row[c]);
    values.push(r.pending, r.page ?? null, i >= input.records.length);
    return values;
  });
  return sql`served AS (
      -- Every sighting; the divergent ones only take part in the conflict check.
      SELECT ${SERVED_SELECT} FROM jsonb_array_elements(${JSON.stringify(elements)}::jsonb) AS e
      ${input.fenced ? sql`WHERE EXISTS (SELECT 1 FROM fenced)` : sql``}
    ),
    input AS (
      SELECT ${COLUMN_LIST}, pending FROM served WHERE NOT divergent
    ),
    folded_tags AS (${FOLDED_TAGS}),
    tagged AS (
      SELECT i.*, coalesce(exact.tag, folded.tag, i.token_tag) AS matched_tag
      FROM input i
      LEFT JOIN ledger_tokens exact ON exact.tag = i.token_tag
      LEFT JOIN folded_tags folded ON folded.folded = lower(i.token_tag)
    ),
    old AS (
      SELECT t.* FROM ledger_transactions t WHERE ${lookups ? sql`t.raw_id IN (SELECT raw_id FROM input)` : sql`false`}
    ),
    clash AS (
      SELECT i.raw_id, i.ledger_hash, t.raw_id AS other_raw_id, ${CLASH_REASON} AS reason
      FROM input i JOIN ledger_transactions t ON ${lookups ? sql`t.ledger_hash = i.ledger_hash AND t.raw_id <> i.raw_id` : sql`false`}
    )`;
}

/**
 * Whether the records are looked up. Assumed new, they are not: `old`, `clash` and `changed` are
 * empty, and the insert's unique indexes hold the assumption (see `RecordWriteInput.assumeNew`).
 */
function lookedUp(input: RecordWriteInput): boolean {
  return input.assumeNew !== true;
}

/**
 * `fresh` (records inserted), `changed` (stored records updated) and `upserted` (both): only rows
 * that differ are written, and never one in conflict or clash.
 */
function rowWriteCtes(now: string, lookups: boolean): SQL {
  // No ON CONFLICT: a record another writer inserted after the statement began (streams racing
  // for a new record) fails the insert with a unique violation, and the store repeats the whole
  // write (`withRetries`), which then sees that row and its version, so the status history keeps
  // it; writing over it here would lose it.
  return sql`fresh AS (
      -- Records not stored at the statement's start.
      INSERT INTO ledger_transactions (${COLUMN_LIST}, first_seen_at, updated_at)
      SELECT ${SELECT_LIST}, ${now}::timestamptz, ${now}::timestamptz
      FROM tagged i
      WHERE i.raw_id NOT IN (SELECT raw_id FROM old) AND i.raw_id NOT IN (SELECT raw_id FROM clash)
      ORDER BY i.raw_id
      RETURNING raw_id, status, internal_status, internal_status_code, data
    ),
    ${
      lookups
        ? sql`changed AS (
      -- Stored records that differ: only those are locked and written. A row whose immutable
      -- fields differ is a conflict (above), never an update. The version each replaces is read
      -- under that lock (prior): a writer that changed it after the statement began is waited
      -- for, and its version, not the one this statement's snapshot holds, is the one replaced.
      UPDATE ledger_transactions t SET ${TAGGED_SET}, updated_at = ${now}::timestamptz,
        status_changes = t.status_changes
          + CASE WHEN (t.status, t.internal_status) IS DISTINCT FROM (i.status, i.internal_status) THEN 1 ELSE 0 END
      FROM tagged i JOIN (
        SELECT l.raw_id, l.status, l.internal_status, l.internal_status_code, l.data, l.first_seen_at,
          l.status_changes
        FROM ledger_transactions l
        WHERE l.raw_id IN (SELECT raw_id FROM old) AND l.raw_id NOT IN (SELECT raw_id FROM clash)
          AND EXISTS (
            SELECT 1 FROM tagged i WHERE i.raw_id = l.raw_id AND ${differsFromStored('l')}
              AND ${immutableTuple('l')} IS NOT DISTINCT FROM ${immutableTuple('i')})
        ORDER BY l.raw_id
        FOR UPDATE
      ) prior ON prior.raw_id = i.raw_id
      WHERE t.raw_id = i.raw_id
        AND ${differsFromStored('t')}
        AND ${immutableTuple('t')} IS NOT DISTINCT FROM ${immutableTuple('i')}
      RETURNING t.raw_id, t.status, t.internal_status, t.internal_status_code, t.data,
        prior.status AS prior_status, prior.internal_status AS prior_internal_status,
        prior.internal_status_code AS prior_internal_status_code, prior.data AS prior_data,
        prior.first_seen_at AS prior_first_seen_at, prior.status_changes AS prior_status_changes
    )`
        : sql`changed AS (
      SELECT raw_id, status, internal_status, internal_status_code, data,
        status AS prior_status, internal_status AS prior_internal_status,
        internal_status_code AS prior_internal_status_code, data AS prior_data,
        first_seen_at AS prior_first_seen_at, status_changes AS prior_status_changes
      FROM ledger_transactions WHERE false
    )`
    },
    upserted AS (
      SELECT raw_id, status, internal_status, internal_status_code, data, true AS inserted FROM fresh
      UNION ALL
      SELECT raw_id, status, internal_status, internal_status_code, data, false AS inserted FROM changed
    )`;
}

/**
 * Appends a status-history row for each change of a stored record's status or internal status,
 * and for each new record not final yet (`pending`). A record final when first stored has no row:
 * its one version is its row in `ledger_transactions`, seen at `first_seen_at` (most of a
 * backfill's records, whose copies in the history cost PostgreSQL a tenth to a fifth of its
 * work). When such a record does change, its first version is written too, at its
 * `first_seen_at`, so the history of every record that ever changed starts with its first
 * sighting. Changes are judged against the version each write replaced (`changed`'s prior),
 * so writers changing one record at once each record what they replaced.
 */
function historyCte(now: string): SQL {
  const differs = sql`(c.prior_status IS DISTINCT FROM c.status OR c.prior_internal_status IS DISTINCT FROM c.internal_status)`;
  return sql`history AS (
      INSERT INTO ledger_tx_status_history (raw_id, status, internal_status, internal_status_code, observed_at)
      SELECT v.raw_id, v.status, v.internal_status, v.internal_status_code, v.observed_at FROM (
        -- The first version of a record final when first stored, replaced now; unless another
        -- writer changed the status since this statement's snapshot (its count of changes moved:
        -- that writer wrote the first version, though this snapshot shows no history row). A
        -- writer that changed other fields only (a token retag) wrote no history and counts none.
        SELECT c.raw_id, c.prior_status AS status, c.prior_internal_status AS internal_status,
          c.prior_internal_status_code AS internal_status_code, c.prior_first_seen_at AS observed_at, 0 AS turn
        FROM changed c JOIN old o ON o.raw_id = c.raw_id
        WHERE ${differs}
          AND o.status_changes = c.prior_status_changes
          AND NOT EXISTS (SELECT 1 FROM ledger_tx_status_history h WHERE h.raw_id = c.raw_id)
        UNION ALL
        SELECT c.raw_id, c.status, c.internal_status, c.internal_status_code, ${now}::timestamptz, 1
        FROM changed c WHERE ${differs}
        UNION ALL
        SELECT f.raw_id, f.status, f.internal_status, f.internal_status_code, ${now}::timestamptz, 1
        FROM fresh f JOIN input i ON i.raw_id = f.raw_id WHERE i.pending IS NOT NULL
      ) v
      -- A first version before the one replacing it, whatever the clock says.
      ORDER BY v.raw_id, v.turn
    )`;
}

/**
 * The statement's one result row: `fenced`, `inserted`, `written` (inserted + updated),
 * `conflicts` (disagreeing sightings), `kept_conflicts` (the rawIds of those among the records,
 * JSON text) and `clashes` (JSON text, each with its reason).
 */
export function writeResult(commit: { fenced: boolean; synchronousCommit: 'on' | 'off' | null }): SQL {
  const { synchronousCommit } = commit;
  return sql`SELECT
      ${commit.fenced ? sql`(SELECT count(*)::int FROM fenced)` : sql`1`} AS fenced,
      ${synchronousCommit ? sql`set_config('synchronous_commit', ${synchronousCommit}, true) AS commit_mode,` : sql``}
      (SELECT count(*)::int FROM fresh) AS inserted,
      (SELECT count(*)::int FROM upserted) AS written,
      (SELECT count(*)::int FROM conflict) AS conflicts,
      (SELECT coalesce(json_agg(raw_id)::text, '[]') FROM conflict WHERE NOT divergent) AS kept_conflicts,
      (SELECT coalesce(json_agg(json_build_object('raw_id', raw_id, 'ledger_hash', ledger_hash, 'reason', reason))::text, '[]')
       FROM clash) AS clashes`;
}

/** Rewrites the bundle items of the records written (new ones, or stored ones whose `data` changed). */
function bundleItemCtes(records: readonly ServedRecord[]): SQL {
  const items = records.flatMap((r) => r.items.map((item) => ITEM_COLUMNS.map((c) => item[c])));
  return sql`items_target AS (
      SELECT raw_id FROM fresh
      UNION ALL
      SELECT raw_id FROM changed WHERE prior_data IS DISTINCT FROM data
    ),
    items_in AS (
      SELECT ${ITEM_SELECT} FROM jsonb_array_elements(${JSON.stringify(items)}::jsonb) AS e
    ),
    items_deleted AS (
      -- Key lookups by an array of the targets: joined to the few targets instead, the planner
      -- scans the whole table while its statistics lag behind a backfill.
      DELETE FROM ledger_bundle_items b
      WHERE b.raw_id = ANY (ARRAY(SELECT raw_id FROM items_target))
        AND NOT EXISTS (SELECT 1 FROM items_in n WHERE n.raw_id = b.raw_id AND n.item_index = b.item_index)
    ),
    items_written AS (
      INSERT INTO ledger_bundle_items (${ITEM_COLUMN_LIST})
      SELECT ${ITEM_COLUMN_LIST} FROM items_in n WHERE n.raw_id IN (SELECT raw_id FROM items_target)
      ORDER BY n.raw_id, n.item_index
      ON CONFLICT (raw_id, item_index) DO UPDATE SET ${ITEM_UPDATE_SET}
    )`;
}

/**
 * Queues the records written that are not final for a re-read, and drops the final ones from the
 * queue. A queued record seen again on a page was just read: it is not due before
 * `recheckAfterMs` from now (a later due time, a backoff, is kept). `assumeNew`: the records are
 * taken to be stored nowhere yet (`RecordWriteInput.assumeNew`).
 */
export function rereadQueueCtes(policy: RereadPolicy, now: string, assumeNew = false): SQL {
  return sql`,
    rechecks_added AS (
      INSERT INTO ledger_tx_rechecks AS r (raw_id, due_at, attempts, pending, unchanged)
      SELECT i.raw_id, ${now}::timestamptz + ${policy.recheckAfterMs}::float8 * interval '1 millisecond', 0, i.pending, 0
      FROM input i
      WHERE i.pending IS NOT NULL
        AND (i.raw_id IN (SELECT raw_id FROM upserted)
             OR (i.raw_id IN (SELECT raw_id FROM ledger_tx_rechecks) AND i.raw_id NOT IN (SELECT raw_id FROM conflict)))
      ORDER BY i.raw_id
      ON CONFLICT (raw_id) DO UPDATE SET
        due_at = greatest(r.due_at, excluded.due_at),
        unchanged = CASE WHEN r.pending = excluded.pending THEN r.unchanged ELSE 0 END,
        pending = excluded.pending
    )${
      // The queue holds stored records only (its foreign key): new ones have nothing to drop.
      assumeNew
        ? sql``
        : sql`,
    rechecks_done AS (
      DELETE FROM ledger_tx_rechecks r USING input i
      WHERE r.raw_id = i.raw_id AND i.pending IS NULL AND i.raw_id NOT IN (SELECT raw_id FROM conflict)
    )`
    }`;
}

/**
 * The rejected rows a commit writes, as the source `s` of `upsertRejectedSql`: those set aside
 * before the write (kept when `gate` holds) and those the statement refused for a `ledgerHash`
 * stored under another rawId (`clash`), grouped by fingerprint; `s.page` is the latest page.
 */
export function rejectedWithClashes(early: readonly RejectedRow[], gate: SQL): SQL {
  return sql`(
      SELECT fingerprint, sum(seen_count)::int AS seen_count, min(reason) AS reason, min(raw_text) AS raw_text,
             min(raw_id) AS raw_id, min(ledger_hash) AS ledger_hash, max(page) AS page
      FROM (
        SELECT r.fingerprint, r.seen_count, r.reason, r.raw_text, r.raw_id, r.ledger_hash, r.page
        FROM ${rejectedSource(early)} r ${gate}
        UNION ALL
        SELECT ${rejectedFingerprint(sql`x.reason`, sql`x.raw_text`)}, 1, x.reason, x.raw_text,
               x.raw_id, x.ledger_hash, x.page
        FROM (
          SELECT c.reason, row_to_json(i)::text AS raw_text, c.raw_id, c.ledger_hash,
                 (SELECT min(v.page) FROM served v WHERE v.raw_id = c.raw_id) AS page
          FROM clash c JOIN input i ON i.raw_id = c.raw_id
        ) x
      ) all_rejected
      GROUP BY fingerprint
    ) s`;
}

const ITEM_COLUMNS = BUNDLE_ITEM_COLUMNS.map((c) => c.name);
const ITEM_SELECT = sql.raw(elementColumns(BUNDLE_ITEM_COLUMNS));
const ITEM_COLUMN_LIST = sql.raw(ITEM_COLUMNS.join(', '));
const ITEM_UPDATE_SET = sql.raw(
  ITEM_COLUMNS.filter((c) => c !== 'raw_id' && c !== 'item_index')
    .map((c) => `${c} = excluded.${c}`)
    .join(', '),
);
