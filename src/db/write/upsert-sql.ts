/**
 * The page-write statement, built as SQL without I/O: columns travel as one text[] parameter
 * each, and one statement upserts the rows, records conflicts, appends status history, rewrites
 * bundle items and queues or clears re-reads.
 */
import { type SQL, sql } from 'drizzle-orm';

import type { SettleState } from '../../sync/ports/sync-store.js';
import { BUNDLE_ITEM_COLUMNS, RECORD_COLUMNS, type WrittenColumn } from '../schema/transaction-columns.js';
import type { RecheckPolicy } from './reread-queue.js';
import { textArray } from '../text-array.js';
import { conflictCtes, immutableTuple } from './conflict-sql.js';
import type { EncodedTransaction } from './encode.js';
import { backfillLeaseRenewal } from './range-write-sql.js';
import { type RejectedRow, rejectedSource, upsertRejectedSql } from './rejected-rows.js';
import { settleAssignments } from './settle-columns.js';
import { headAssignments } from './stream-heads.js';

const COLUMNS = RECORD_COLUMNS.map((c) => c.name);
const castTo = (column: WrittenColumn<string>): string =>
  column.sqlType === 'text' ? column.name : `${column.name}::${column.sqlType} AS ${column.name}`;

// Fixed identifiers only: no value ever goes into these strings. Values travel as one text[]
// parameter per column (driver-independent, cheap to parse), cast to the column types in SQL.
const CAST_LIST = sql.raw(
  [...RECORD_COLUMNS.map(castTo), 'pending', 'page::integer AS page', 'divergent::boolean AS divergent'].join(
    ', ',
  ),
);
const UNNEST_NAMES = sql.raw([...COLUMNS, 'pending', 'page', 'divergent'].join(', '));
const COLUMN_LIST = sql.raw(COLUMNS.join(', '));
const DATA_COLUMNS = COLUMNS.filter((c) => c !== 'raw_id');
const SELECT_LIST = sql.raw(COLUMNS.map((c) => (c === 'token_tag' ? 'i.matched_tag' : `i.${c}`)).join(', '));
// Check outcomes a write may lack (signatures not checked this time): a stored outcome stays.
const KEPT_WHEN_NULL: ReadonlySet<string> = new Set(['signature_check']);
const newValue = (c: string, value: string, stored: string): string =>
  KEPT_WHEN_NULL.has(c) ? `coalesce(${value}, ${stored}.${c})` : value;
const excludedValue = (c: string): string => newValue(c, `excluded.${c}`, 'ledger_transactions');
const UPDATE_SET = sql.raw(DATA_COLUMNS.map((c) => `${c} = ${excludedValue(c)}`).join(', '));
const CURRENT_VALUES = sql.raw(DATA_COLUMNS.map((c) => `ledger_transactions.${c}`).join(', '));
const NEW_VALUES = sql.raw(DATA_COLUMNS.map(excludedValue).join(', '));
const taggedColumn = (c: string): string => newValue(c, c === 'token_tag' ? 'i.matched_tag' : `i.${c}`, 't');
const TAGGED_SET = sql.raw(DATA_COLUMNS.map((c) => `${c} = ${taggedColumn(c)}`).join(', '));
const STORED_VALUES = sql.raw(DATA_COLUMNS.map((c) => `t.${c}`).join(', '));
const TAGGED_VALUES = sql.raw(DATA_COLUMNS.map(taggedColumn).join(', '));

/** A record to write, with the page that served it. */
export interface ServedRecord extends EncodedTransaction {
  /** The page it was served on; null or absent when unknown (re-reads). */
  page?: number | null | undefined;
}

/** The stream side of a page commit (see {@link UpsertInput.page}). */
export interface PageWrite {
  streamKey: string;
  fence: number;
  owner: string;
  page: number;
  /** The new walk checkpoint (JSON-able), null when the walk is finished. */
  walk: unknown;
  watermark: number | null;
  /** The stream's settling state after the walk (`PageCommit.settle`); absent: unchanged. */
  settle?: SettleState | undefined;
  /** The newest rawId of page 1 when the commit holds page 1 (the service's head), else null. */
  head: number | null;
  /** Records set aside before the write (already grouped). */
  rejected: readonly RejectedRow[];
  /** PostgreSQL `synchronous_commit` for this commit. */
  synchronousCommit: 'on' | 'off';
  /**
   * The commit's first page: the stored checkpoint must lead there (`PageCommit.fromPage`), else
   * nothing is written and `fenced` is 0, as for a stale fence. Absent, or on a lane: not checked.
   */
  fromPage?: number | undefined;
  /** A walk by key: the cursor the stored checkpoint must hold (`PageCommit.fromCursor`). */
  fromCursor?: number | null | undefined;
  /** Pages the commit holds, for the run's count. Default 1. */
  pages?: number | undefined;
  /**
   * A lane commit (one of several at once; see `PageCommit.lane`), of the walk run `attempt`
   * (`WalkCheckpoint.attempt`): the fence is checked under a
   * shared lock, so lanes do not wait for each other, and the checkpoint and the counts go to
   * `sync_walk_commits` instead of the stream and its run.
   */
  lane?: { fromPage: number; attempt: string } | undefined;
}

/** The backfill side of a range commit (see {@link UpsertInput.range}). */
export interface RangeWrite {
  streamKey: string;
  backfillId: string;
  /** The backfill's owner of the stream lease (`backfillOwner`). */
  owner: string;
  /** Records set aside before the write, grouped, each with its page (`toPagedRejectedRows`). */
  rejected: readonly RejectedRow[];
  /** The ranges of rawIds the pages prove. */
  proven: ReadonlyArray<{ lo: number; hi: number; loPage?: number | undefined }>;
  /** The lowest rawId missing from the pages that may still fill in: lowers the run's `open_gap`. */
  openGap?: number | null | undefined;
}

/** Input of {@link writeTransactions}. */
export interface UpsertInput {
  /** One per rawId. */
  records: readonly ServedRecord[];
  /** Later sightings of those records that disagree with them: recorded as conflicts only. */
  divergent?: readonly ServedRecord[] | undefined;
  /** Stream (and parallel backfill) the records were served for; page writes default to their stream. */
  origin?: { streamKey: string; backfillId?: string | undefined } | undefined;
  now: Date;
  /** Queue records not final for re-reading with this policy (page writes); null for re-reads. */
  queueRechecks: RecheckPolicy | null;
  /**
   * Makes the statement a whole page commit on its own: the stream's fence is checked (and its
   * checkpoint written) first, nothing else is written when it fails, rejected records are
   * stored, and the stream's run is credited. Run it outside a transaction: it is one.
   */
  page?: PageWrite | undefined;
  /**
   * Makes the statement a parallel backfill's range commit on its own: the pages' records, their
   * rejected ones, the ranges they prove and the lease's extension, committed asynchronously (a
   * commit lost in a crash only leaves a gap for the check to repair). Run it outside a
   * transaction: it is one.
   */
  range?: RangeWrite | undefined;
  /**
   * Run as a named prepared statement (parsed once per connection). Only over connections with
   * `plan_cache_mode = force_custom_plan`, as `openDatabase` makes them: a generic plan made
   * while the table was small would scan it whole once it is large. Default false.
   */
  prepared?: boolean | undefined;
}

/**
 * The statement of {@link writeTransactions}, built without I/O. Its result row holds
 * `inserted`, `written` (inserted + updated), `conflicts` (disagreeing sightings),
 * `kept_conflicts` (the rawIds of those among `records`, JSON text) and `clashes` (JSON text).
 */
export function buildUpsertQuery(input: UpsertInput): SQL {
  const now = input.now.toISOString();
  const policy = input.queueRechecks;
  const page = input.page;
  const streamKey = input.origin?.streamKey ?? page?.streamKey ?? null;
  const runId = page
    ? sql`(SELECT id FROM sync_runs WHERE stream_key = ${page.streamKey} AND fence = ${page.fence}::bigint)`
    : sql`NULL::bigint`;
  const conflicts = conflictCtes({ streamKey, runId, backfillId: input.origin?.backfillId ?? null, now });
  return sql`
    WITH ${page ? fencedCte(page, now) : sql``}${servedCtes(input)},
    ${conflicts},
    ${rowWriteCtes(now)},
    ${historyCte(now)},
    ${bundleItemCtes(input.records)}${policy ? recheckCtes(policy, now) : sql``}${page ? pageCtes(page, input.records.length, now) : sql``}${input.range ? rangeCtes(input.range, now) : sql``}
    ${resultSelect({ fenced: page !== undefined, synchronousCommit: page?.synchronousCommit ?? (input.range ? 'off' : null) })}
  `;
}

/**
 * The records as rows: `served` (every sighting, the divergent ones only take part in the
 * conflict check), `input` (one per rawId), `tagged` (with the `ledger_tokens` tag matching
 * theirs), `old` (their stored rows) and `clash` (those whose `ledgerHash` another rawId has).
 */
function servedCtes(input: UpsertInput): SQL {
  const divergent = input.divergent ?? [];
  const rows = divergent.length === 0 ? input.records : [...input.records, ...divergent];
  const columns = sql.join(
    [
      ...COLUMNS.map((c) => rows.map((r) => cell(r.row[c]))),
      rows.map((r) => r.pending),
      rows.map((r) => (r.page === null || r.page === undefined ? null : String(r.page))),
      rows.map((_, i) => (i < input.records.length ? 'f' : 't')),
    ].map((values) => sql`${textArray(values)}::text[]`),
    sql`, `,
  );
  return sql`served AS (
      -- Every sighting; the divergent ones only take part in the conflict check.
      SELECT ${CAST_LIST} FROM unnest(${columns}) AS r(${UNNEST_NAMES})
      ${input.page ? sql`WHERE EXISTS (SELECT 1 FROM fenced)` : sql``}
    ),
    input AS (
      SELECT ${COLUMN_LIST}, pending FROM served WHERE NOT divergent
    ),
    folded_tags AS (
      SELECT DISTINCT ON (lower(tag)) lower(tag) AS folded, tag FROM ledger_tokens ORDER BY lower(tag), tag
    ),
    tagged AS (
      SELECT i.*, coalesce(exact.tag, folded.tag, i.token_tag) AS matched_tag
      FROM input i
      LEFT JOIN ledger_tokens exact ON exact.tag = i.token_tag
      LEFT JOIN folded_tags folded ON folded.folded = lower(i.token_tag)
    ),
    old AS (
      SELECT t.* FROM ledger_transactions t WHERE t.raw_id IN (SELECT raw_id FROM input)
    ),
    clash AS (
      SELECT i.raw_id, i.ledger_hash, t.raw_id AS other_raw_id
      FROM input i JOIN ledger_transactions t ON t.ledger_hash = i.ledger_hash AND t.raw_id <> i.raw_id
    )`;
}

/**
 * `fresh` (records inserted), `changed` (stored records updated) and `upserted` (both): only rows
 * that differ are written, and never one in conflict or clash.
 */
function rowWriteCtes(now: string): SQL {
  return sql`fresh AS (
      -- Records not stored at the statement's start. ON CONFLICT only guards against another
      -- writer inserting the same record meanwhile; then it behaves like the update below.
      INSERT INTO ledger_transactions (${COLUMN_LIST}, first_seen_at, updated_at)
      SELECT ${SELECT_LIST}, ${now}::timestamptz, ${now}::timestamptz
      FROM tagged i
      WHERE i.raw_id NOT IN (SELECT raw_id FROM old) AND i.raw_id NOT IN (SELECT raw_id FROM clash)
      ORDER BY i.raw_id
      ON CONFLICT (raw_id) DO UPDATE SET ${UPDATE_SET}, updated_at = excluded.updated_at
      WHERE (${CURRENT_VALUES}) IS DISTINCT FROM (${NEW_VALUES})
        AND ${immutableTuple('ledger_transactions')} IS NOT DISTINCT FROM ${immutableTuple('excluded')}
      RETURNING raw_id, status, internal_status, internal_status_code, data
    ),
    changed AS (
      -- Stored records: only those that differ are written, and unchanged rows are not even locked.
      -- A row whose immutable fields differ is a conflict (above), never an update.
      UPDATE ledger_transactions t SET ${TAGGED_SET}, updated_at = ${now}::timestamptz
      FROM tagged i
      WHERE t.raw_id = i.raw_id
        AND i.raw_id IN (SELECT raw_id FROM old) AND i.raw_id NOT IN (SELECT raw_id FROM clash)
        AND (${STORED_VALUES}) IS DISTINCT FROM (${TAGGED_VALUES})
        AND ${immutableTuple('t')} IS NOT DISTINCT FROM ${immutableTuple('i')}
      RETURNING t.raw_id, t.status, t.internal_status, t.internal_status_code, t.data
    ),
    upserted AS (
      SELECT *, true AS inserted FROM fresh UNION ALL SELECT *, false AS inserted FROM changed
    )`;
}

/** Appends a status-history row for each record new, or whose status or internal status changed. */
function historyCte(now: string): SQL {
  return sql`history AS (
      INSERT INTO ledger_tx_status_history (raw_id, status, internal_status, internal_status_code, observed_at)
      SELECT u.raw_id, u.status, u.internal_status, u.internal_status_code, ${now}::timestamptz
      FROM upserted u LEFT JOIN old o ON o.raw_id = u.raw_id
      WHERE o.raw_id IS NULL
         OR o.status IS DISTINCT FROM u.status
         OR o.internal_status IS DISTINCT FROM u.internal_status
      ORDER BY u.raw_id
    )`;
}

/** The statement's one result row (see {@link buildUpsertQuery}). */
function resultSelect(commit: { fenced: boolean; synchronousCommit: 'on' | 'off' | null }): SQL {
  const { synchronousCommit } = commit;
  return sql`SELECT
      ${commit.fenced ? sql`(SELECT count(*)::int FROM fenced)` : sql`1`} AS fenced,
      ${synchronousCommit ? sql`set_config('synchronous_commit', ${synchronousCommit}, true) AS commit_mode,` : sql``}
      (SELECT count(*)::int FROM fresh) AS inserted,
      (SELECT count(*)::int FROM upserted) AS written,
      (SELECT count(*)::int FROM conflict) AS conflicts,
      (SELECT coalesce(json_agg(raw_id)::text, '[]') FROM conflict WHERE NOT divergent) AS kept_conflicts,
      (SELECT coalesce(json_agg(json_build_object('raw_id', raw_id, 'ledger_hash', ledger_hash, 'other_raw_id', other_raw_id))::text, '[]')
       FROM clash) AS clashes`;
}

/** Rewrites the bundle items of the records written (new ones, or stored ones whose `data` changed). */
function bundleItemCtes(records: readonly ServedRecord[]): SQL {
  const items = records.flatMap((r) => r.items);
  const itemColumns = sql.join(
    ITEM_COLUMNS.map((c) => sql`${textArray(items.map((item) => String(item[c])))}::text[]`),
    sql`, `,
  );
  return sql`items_target AS (
      SELECT u.raw_id FROM upserted u LEFT JOIN old o ON o.raw_id = u.raw_id
      WHERE o.raw_id IS NULL OR o.data IS DISTINCT FROM u.data
    ),
    items_in AS (
      SELECT ${ITEM_CAST_LIST} FROM unnest(${itemColumns}) AS r(${ITEM_COLUMN_LIST})
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
 * `recheckAfterMs` from now (a later due time, a backoff, is kept).
 */
function recheckCtes(policy: RecheckPolicy, now: string): SQL {
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
    ),
    rechecks_done AS (
      DELETE FROM ledger_tx_rechecks r USING input i
      WHERE r.raw_id = i.raw_id AND i.pending IS NULL AND i.raw_id NOT IN (SELECT raw_id FROM conflict)
    )`;
}

/**
 * Checks the fence and writes the checkpoint; runs before anything else (the input is gated on
 * it), so it also takes the stream row's lock first and a stale writer waits there. Records the
 * head page 1 showed, and when a walk ends a backfill (the first, without a watermark yet, or a
 * `--full` one) the time, which tells `/ready` which `verify` runs still judge the stream.
 */
function fencedCte(page: PageWrite, now: string): SQL {
  // A shared lock: a new lease (which updates the row) waits for the lanes under way, and no
  // lane commits once it is taken. Lanes never hold page 1 (see `createWalkCommits`).
  if (page.lane)
    return sql`fenced AS (
      SELECT key FROM sync_streams WHERE key = ${page.streamKey} AND lease_fence <= ${page.fence}::bigint FOR SHARE
    ),
    `;
  const walkJson = page.walk === null ? null : JSON.stringify(page.walk);
  return sql`fenced AS (
      UPDATE sync_streams SET
        walk = ${walkJson}::jsonb,
        watermark = ${page.watermark}::bigint,
        ${headAssignments(page.head, new Date(now))},${settleAssignments(page.settle)}
        backfilled_at = CASE
          WHEN ${walkJson}::jsonb IS NULL AND ${page.watermark}::bigint IS NOT NULL
               AND (watermark IS NULL OR walk->>'mode' = 'backfill')
          THEN ${now}::timestamptz ELSE backfilled_at END,
        lease_expires_at = CASE
          WHEN lease_owner = ${page.owner} AND lease_fence = ${page.fence}::bigint AND lease_ms IS NOT NULL
          THEN greatest(lease_expires_at, ${now}::timestamptz + lease_ms * interval '1 millisecond')
          ELSE lease_expires_at END,
        updated_at = ${now}::timestamptz
      WHERE key = ${page.streamKey} AND lease_fence <= ${page.fence}::bigint
        ${page.fromPage === undefined ? sql`` : sql`AND coalesce((walk->>'nextPage')::int, 1) = ${page.fromPage}::int`}
        ${page.fromCursor === undefined ? sql`` : sql`AND (walk->>'cursor')::bigint IS NOT DISTINCT FROM ${page.fromCursor}::bigint`}
      RETURNING key
    ),
    `;
}

/** Stores the page's rejected records (those set aside before and those refused for a taken hash) and credits the run. */
function pageCtes(page: PageWrite, records: number, now: string): SQL {
  const early = page.rejected.reduce((n, r) => n + r.seenCount, 0);
  const source = rejectedWithClashes(page.rejected, sql`WHERE EXISTS (SELECT 1 FROM fenced)`);
  const pages = page.pages ?? 1;
  const inserted = sql`(SELECT count(*)::int FROM fresh)`;
  const updated = sql`(SELECT count(*)::int FROM changed)`;
  const unchanged = sql`${records}::int - (SELECT count(*)::int FROM clash) - (SELECT count(*)::int FROM upserted)
          - (SELECT count(*)::int FROM conflict WHERE NOT divergent)`;
  const rejected = sql`${early}::int + (SELECT count(*)::int FROM clash)`;
  const conflicts = sql`(SELECT count(*)::int FROM conflict)`;
  const credit = page.lane
    ? sql`INSERT INTO sync_walk_commits
          (stream_key, fence, attempt, from_page, walk, pages, inserted, updated, unchanged, rejected, conflicts, committed_at)
        SELECT ${page.streamKey}, ${page.fence}::bigint, ${page.lane.attempt},
               ${page.lane.fromPage}::int, ${JSON.stringify(page.walk)}::jsonb,
               ${pages}::int, ${inserted}, ${updated}, ${unchanged}, ${rejected}, ${conflicts}, ${now}::timestamptz
        WHERE EXISTS (SELECT 1 FROM fenced)`
    : sql`UPDATE sync_runs SET
        pages = pages + ${pages}::int,
        inserted = inserted + ${inserted},
        updated = updated + ${updated},
        unchanged = unchanged + ${unchanged},
        rejected = rejected + ${rejected},
        conflicts = conflicts + ${conflicts}
      WHERE stream_key = ${page.streamKey} AND fence = ${page.fence}::bigint AND EXISTS (SELECT 1 FROM fenced)`;
  return sql`,
    rejected_written AS (${upsertRejectedSql({ source, streamKey: page.streamKey, page: page.page, now })}),
    run AS (${credit})`;
}

/**
 * The rejected rows a commit writes, as the source `s` of `upsertRejectedSql`: those set aside
 * before the write (kept when `gate` holds) and those the statement refused for a `ledgerHash`
 * stored under another rawId (`clash`), grouped by fingerprint; `s.page` is the latest page.
 */
function rejectedWithClashes(early: readonly RejectedRow[], gate: SQL): SQL {
  return sql`(
      SELECT fingerprint, sum(seen_count)::int AS seen_count, min(reason) AS reason, min(raw_text) AS raw_text,
             min(raw_id) AS raw_id, min(ledger_hash) AS ledger_hash, max(page) AS page
      FROM (
        SELECT r.fingerprint, r.seen_count, r.reason, r.raw_text, r.raw_id, r.ledger_hash, r.page
        FROM ${rejectedSource(early)} ${gate}
        UNION ALL
        SELECT encode(sha256(convert_to(x.reason || E'\n' || x.raw_text, 'UTF8')), 'hex'), 1, x.reason, x.raw_text,
               x.raw_id, x.ledger_hash, x.page
        FROM (
          SELECT 'ledgerHash ' || c.ledger_hash || ' is already stored under rawId ' || c.other_raw_id AS reason,
                 row_to_json(i)::text AS raw_text, c.raw_id, c.ledger_hash,
                 (SELECT min(v.page) FROM served v WHERE v.raw_id = c.raw_id) AS page
          FROM clash c JOIN input i ON i.raw_id = c.raw_id
        ) x
      ) all_rejected
      GROUP BY fingerprint
    ) s`;
}

/**
 * Stores a parallel backfill range's rejected records (with their pages), extends the backfill's
 * lease on the stream once a third of it has passed, and records the ranges the pages prove: with
 * the records, in the one statement, so a proof never exists without them.
 */
function rangeCtes(range: RangeWrite, now: string): SQL {
  const proven = [
    range.proven.map((r) => String(r.lo)),
    range.proven.map((r) => String(r.hi)),
    range.proven.map((r) => (r.loPage === undefined ? null : String(r.loPage))),
  ].map((values) => textArray(values));
  const source = rejectedWithClashes(range.rejected, sql``);
  return sql`,
    rejected_written AS (${upsertRejectedSql({ source, streamKey: range.streamKey, page: sql`s.page`, now })}),
    lease_renewed AS (${backfillLeaseRenewal({ key: range.streamKey, owner: range.owner, at: now })}),
    proven_written AS (
      INSERT INTO backfill_proven_ranges (stream_key, lo, hi, lo_page, backfill_id, proven_at)
      SELECT ${range.streamKey}, p.lo, p.hi, p.lo_page, ${range.backfillId}, ${now}::timestamptz
      FROM unnest(${proven[0]}::bigint[], ${proven[1]}::bigint[], ${proven[2]}::integer[]) AS p(lo, hi, lo_page)
    )${
      range.openGap === null || range.openGap === undefined
        ? sql``
        : sql`,
    gap_kept AS (
      UPDATE backfill_runs SET open_gap = least(open_gap, ${range.openGap}::bigint) WHERE id = ${range.backfillId}
    )`
    }`;
}

const ITEM_COLUMNS = BUNDLE_ITEM_COLUMNS.map((c) => c.name);
const ITEM_CAST_LIST = sql.raw(BUNDLE_ITEM_COLUMNS.map(castTo).join(', '));
const ITEM_COLUMN_LIST = sql.raw(ITEM_COLUMNS.join(', '));
const ITEM_UPDATE_SET = sql.raw(
  ITEM_COLUMNS.filter((c) => c !== 'raw_id' && c !== 'item_index')
    .map((c) => `${c} = excluded.${c}`)
    .join(', '),
);

function cell(value: string | number | Record<string, unknown> | null): string | null {
  if (value === null) return null;
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
