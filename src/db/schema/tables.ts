/**
 * The mirror's tables (Drizzle). Migrations are generated from this file by drizzle-kit into
 * `migrations/` (`npm run db:generate`); never edit them by hand.
 *
 * Layout of this file: the ledger's data first (transactions, bundle items, tokens, status
 * history, re-read queue), then the sync bookkeeping (streams, runs, rejected records).
 * Tables of the queue/worker side (e.g. the parallel-backfill proof) go at the END of this file,
 * below the marked section, so the two halves never interleave.
 */
import { sql } from 'drizzle-orm';
import {
  bigint,
  bigserial,
  boolean,
  index,
  integer,
  jsonb,
  numeric,
  pgTable,
  primaryKey,
  text,
  timestamp,
  uniqueIndex,
} from 'drizzle-orm/pg-core';

// Generic in the name, so the column keeps its name as a literal type (see `transaction-columns.ts`).
const tstz = <Name extends string>(name: Name) => timestamp(name, { withTimezone: true, mode: 'date' });

/** One row per ledger record, keyed by its `rawId`. Amounts are exact numerics. */
export const ledgerTransactions = pgTable(
  'ledger_transactions',
  {
    rawId: bigint('raw_id', { mode: 'number' }).primaryKey(),
    /** Wire `id`: the storage batch, `''` until packaged. */
    recordId: text('record_id').notNull(),
    tokenSymbol: text('token_symbol').notNull(),
    action: text('action').notNull(),
    fromAccount: text('from_account').notNull(),
    toAccount: text('to_account').notNull(),
    amount: numeric('amount').notNull(),
    fee: numeric('fee').notNull(),
    feeRecipient: text('fee_recipient').notNull(),
    /** Numeric rather than bigint: the wire value is a client-chosen JSON number. */
    nonce: numeric('nonce').notNull(),
    tokenId: text('token_id').notNull(),
    chainType: text('chain_type').notNull(),
    chainId: text('chain_id').notNull(),
    data: text('data').notNull(),
    version: text('version').notNull(),
    sig: text('sig').notNull(),
    ledgerHash: text('ledger_hash').notNull(),
    status: text('status').notNull(),
    /** Raw `internalStatus` string as served (`''` when absent). */
    internalStatus: text('internal_status').notNull(),
    /** Inner `status` of `internalStatus` (`success`, `failed`, …); null when absent or unreadable. */
    internalStatusCode: text('internal_status_code'),
    internalStatusJson: jsonb('internal_status_json'),
    timestampMs: bigint('timestamp_ms', { mode: 'number' }).notNull(),
    /** `timestamp` as a time; null while the service says 0 (not packaged yet). */
    ledgerTime: tstz('ledger_time'),
    targetChainTxHash: text('target_chain_tx_hash').notNull(),
    expressChainTxHash: text('express_chain_tx_hash').notNull(),
    expressWithdrawFee: text('express_withdraw_fee').notNull(),
    expressRefundLedgerHash: text('express_refund_ledger_hash').notNull(),
    expressErr: text('express_err').notNull(),
    /** Derived tag, replaced by the `/info` tag that matches it case-insensitively. */
    tokenTag: text('token_tag').notNull(),
    /**
     * `ledgerHash` against the hash recomputed from the 13 signed fields: `ok`, `mismatch`, or
     * `unknown` (a signed field missing); null for rows stored before the check existed.
     */
    hashCheck: text('hash_check'),
    /**
     * `sig` recovered to `from`: `ok`, `mismatch`, or `unknown` (not an EVM sender); null while
     * signatures are not checked (`LEDGER_CHECK_SIGNATURES`).
     */
    signatureCheck: text('signature_check'),
    /**
     * Changes of `status` or `internal_status` stored (each one a row of the status history after
     * the first). Writers racing for the record compare it to tell whether another changed the
     * status meanwhile; a change of other fields (a token retag) leaves it.
     */
    statusChanges: integer('status_changes').notNull().default(0),
    firstSeenAt: tstz('first_seen_at').notNull(),
    updatedAt: tstz('updated_at').notNull(),
  },
  (t) => [
    uniqueIndex('ledger_transactions_ledger_hash_key').on(t.ledgerHash),
    index('ledger_transactions_token_time_idx').on(t.tokenTag, t.ledgerTime),
    index('ledger_transactions_from_idx').on(t.fromAccount, t.rawId),
    index('ledger_transactions_to_idx').on(t.toAccount, t.rawId),
    index('ledger_transactions_action_time_idx').on(t.action, t.ledgerTime),
    index('ledger_transactions_time_idx').on(t.ledgerTime),
    index('ledger_transactions_non_final_idx').on(t.rawId).where(sql`${t.status} <> 'packaged'`),
    // A pending burn's rank in the burn list (the re-read claim): the burns above it, walked in
    // order from it and stopped at the rank limit, rather than every burn of the action index.
    index('ledger_transactions_burn_idx').on(t.rawId).where(sql`${t.action} = 'burn'`),
    // The status page counts the last hour's new records per minute: a range scan of this index
    // is exact (each record counted once, when first stored) and reads only that hour's entries.
    index('ledger_transactions_first_seen_idx').on(t.firstSeenAt),
    // The read API's account filters and balances: EVM accounts match in any case, so they are
    // looked up by `lower(…)` (other ids exactly, by the indexes above). Both kinds hold the
    // rawId after the account: an account's list is read from them in rawId order, only as far
    // as its page goes.
    index('ledger_transactions_from_lower_idx').on(sql`lower(${t.fromAccount})`, t.rawId),
    index('ledger_transactions_to_lower_idx').on(sql`lower(${t.toAccount})`, t.rawId),
    index('ledger_transactions_fee_recipient_lower_idx').on(sql`lower(${t.feeRecipient})`),
    // The read API's `/minted/{chainTxHash}`: a mint by its source-chain hash.
    index('ledger_transactions_mint_chain_hash_idx').on(t.targetChainTxHash).where(sql`${t.action} = 'mint'`),
  ],
);

/** One row per item of a bundle's `data`. Items took effect only when the bundle's `internal_status_code` is `success`. */
export const ledgerBundleItems = pgTable(
  'ledger_bundle_items',
  {
    /** The bundle's `ledger_transactions.raw_id` (no foreign key: a per-row check would slow every write, and records are never deleted). */
    rawId: bigint('raw_id', { mode: 'number' }).notNull(),
    itemIndex: integer('item_index').notNull(),
    tag: text('tag').notNull(),
    chainId: text('chain_id').notNull(),
    fromAccount: text('from_account').notNull(),
    toAccount: text('to_account').notNull(),
    amount: numeric('amount').notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.rawId, t.itemIndex] }),
    index('ledger_bundle_items_tag_idx').on(t.tag),
    index('ledger_bundle_items_from_idx').on(t.fromAccount),
    index('ledger_bundle_items_to_idx').on(t.toAccount),
    index('ledger_bundle_items_from_lower_idx').on(sql`lower(${t.fromAccount})`),
    index('ledger_bundle_items_to_lower_idx').on(sql`lower(${t.toAccount})`),
  ],
);

/** The tokens of `/info`; their tags are authoritative. */
export const ledgerTokens = pgTable(
  'ledger_tokens',
  {
    tag: text('tag').primaryKey(),
    symbol: text('symbol').notNull(),
    decimals: integer('decimals').notNull(),
    chainType: text('chain_type').notNull(),
    chainId: text('chain_id').notNull(),
    tokenId: text('token_id').notNull(),
    raw: jsonb('raw').notNull(),
    updatedAt: tstz('updated_at').notNull(),
    /** The last refresh whose `/info` listed it (changed or not): how fresh the token list is. */
    listedAt: tstz('listed_at').notNull().defaultNow(),
  },
  (t) => [index('ledger_tokens_tag_lower_idx').on(sql`lower(${t.tag})`)],
);

/** Each observed change of a record's `status`/`internal_status`, the first sighting included. */
export const ledgerTxStatusHistory = pgTable(
  'ledger_tx_status_history',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    /** The record's `ledger_transactions.raw_id` (no foreign key, as for bundle items). */
    rawId: bigint('raw_id', { mode: 'number' }).notNull(),
    status: text('status').notNull(),
    internalStatus: text('internal_status').notNull(),
    internalStatusCode: text('internal_status_code'),
    observedAt: tstz('observed_at').notNull(),
  },
  (t) => [index('ledger_tx_status_history_raw_id_idx').on(t.rawId, t.observedAt)],
);

/**
 * Records not final yet (status not `packaged`, or a recent burn still without its target-chain
 * hash) and when to re-read them. Kept apart from `ledger_transactions` so a re-read that finds
 * nothing new does not rewrite the record.
 */
export const ledgerTxRechecks = pgTable(
  'ledger_tx_rechecks',
  {
    rawId: bigint('raw_id', { mode: 'number' })
      .primaryKey()
      .references(() => ledgerTransactions.rawId, { onDelete: 'cascade' }),
    dueAt: tstz('due_at').notNull(),
    /** Reads so far (list pages and look-ups alike). */
    attempts: integer('attempts').notNull().default(0),
    /** Why it is not final at its last read: `status`, `burn`, or `missing` (the service answered 404). */
    pending: text('pending').notNull().default('status'),
    /** Reads in a row that found it as it was: past a few, and once it is a straggler, it is read with backoff. */
    unchanged: integer('unchanged').notNull().default(0),
    /**
     * The one-shot sync whose claim pushed `due_at` ahead (its lease owner), until its re-read is
     * committed: a later run that finds that sync gone makes the record due again at once.
     */
    claimedBy: text('claimed_by'),
  },
  (t) => [
    index('ledger_tx_rechecks_due_idx').on(t.dueAt, t.rawId),
    index('ledger_tx_rechecks_claimed_idx').on(t.claimedBy).where(sql`${t.claimedBy} IS NOT NULL`),
  ],
);

/** One row per stream (a list followed with its filters): walk checkpoint, watermark, lease. */
export const syncStreams = pgTable('sync_streams', {
  key: text('key').primaryKey(),
  spec: jsonb('spec').notNull(),
  /** The walk in progress (`WalkCheckpoint`), null when none is. */
  walk: jsonb('walk'),
  watermark: bigint('watermark', { mode: 'number' }),
  leaseOwner: text('lease_owner'),
  /** Fencing number: grows with every new lease; writes carrying a smaller one are refused. */
  leaseFence: bigint('lease_fence', { mode: 'number' }).notNull().default(0),
  leaseExpiresAt: tstz('lease_expires_at'),
  /** Lease length asked for at acquisition; each committed page extends the lease by it. */
  leaseMs: integer('lease_ms'),
  lastSuccessAt: tstz('last_success_at'),
  lastErrorAt: tstz('last_error_at'),
  errorStreak: integer('error_streak').notNull().default(0),
  lastError: text('last_error'),
  /**
   * The newest rawId the service was seen to list for the stream (page 1 read by a walk or a
   * parallel backfill, or by the head probe of `status`, `/status` and `/metrics`): the lag is
   * this minus the watermark. Only grows.
   */
  headRawId: bigint('head_raw_id', { mode: 'number' }),
  /** When `head_raw_id` was last seen at the service. */
  headSeenAt: tstz('head_seen_at'),
  /** When the stream's latest backfill ended (its watermark set): older `verify` runs no longer judge it. */
  backfilledAt: tstz('backfilled_at'),
  /**
   * Every record of the stream at or below it is stored, records that became visible late
   * included: where a tail stops reading (`SettleState.settled`). Null: the watermark is trusted.
   */
  settledRawId: bigint('settled_raw_id', { mode: 'number' }),
  /** A walk's head waiting to settle (`SettleState.pending`), and when it was seen. */
  settlePendingRawId: bigint('settle_pending_raw_id', { mode: 'number' }),
  settlePendingAt: tstz('settle_pending_at'),
  /**
   * The heads of later walks waiting to settle after it (`SettleState.later`): a JSON array of
   * `{rawId, at}` (ms), oldest first. Null: none.
   */
  settlePendingLater: jsonb('settle_pending_later'),
  createdAt: tstz('created_at').notNull(),
  updatedAt: tstz('updated_at').notNull(),
});

/** One row per run (lease) of a stream, with what it wrote. */
export const syncRuns = pgTable(
  'sync_runs',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    streamKey: text('stream_key')
      .notNull()
      .references(() => syncStreams.key, { onDelete: 'cascade' }),
    fence: bigint('fence', { mode: 'number' }).notNull(),
    owner: text('owner').notNull(),
    startedAt: tstz('started_at').notNull(),
    finishedAt: tstz('finished_at'),
    pages: integer('pages').notNull().default(0),
    inserted: integer('inserted').notNull().default(0),
    updated: integer('updated').notNull().default(0),
    unchanged: integer('unchanged').notNull().default(0),
    rejected: integer('rejected').notNull().default(0),
    /** Records served with immutable fields different from the stored ones (see `ledger_tx_conflicts`). */
    conflicts: integer('conflicts').notNull().default(0),
    /** `running`, `ok` or `error`. */
    outcome: text('outcome').notNull(),
    error: text('error'),
    /** How the run read the list, `key` or `page` (as `service_dialects.paging`); null when not recorded. */
    paging: text('paging'),
    /** By key, the records asked a request when the run ended: the service may have refused more. */
    keyCount: integer('key_count'),
  },
  (t) => [
    uniqueIndex('sync_runs_stream_fence_key').on(t.streamKey, t.fence),
    index('sync_runs_started_idx').on(t.startedAt),
  ],
);

/** What could not be stored, once per distinct (reason, raw text); re-reads bump `seen_count`. */
export const rejectedRecords = pgTable(
  'rejected_records',
  {
    /** sha256 of reason and raw text: the de-duplication key. */
    fingerprint: text('fingerprint').primaryKey(),
    /** The stream that saw it last. */
    streamKey: text('stream_key'),
    /**
     * Every stream that saw it: one record set aside serves the global list and each account or
     * filtered list that holds it, and each stream's count must find it (rows written before this
     * column hold none: `stream_key` stands for them).
     */
    streamKeys: text('stream_keys').array().notNull().default(sql`'{}'::text[]`),
    page: integer('page'),
    reason: text('reason').notNull(),
    rawText: text('raw_text').notNull(),
    rawId: bigint('raw_id', { mode: 'number' }),
    ledgerHash: text('ledger_hash'),
    firstSeenAt: tstz('first_seen_at').notNull(),
    seenAt: tstz('seen_at').notNull(),
    seenCount: integer('seen_count').notNull().default(1),
  },
  (t) => [index('rejected_records_raw_id_idx').on(t.rawId), index('rejected_records_seen_idx').on(t.seenAt)],
);

/**
 * A record served again with fields that never change after first sight (amount, accounts, token,
 * `ledgerHash`, `sig`, …) different from the stored record. The stored record is kept as it was;
 * each distinct served version is one row, seen again bumps `seen_count`. `verify` fails while
 * any row is here: look into it, then delete the row.
 */
export const ledgerTxConflicts = pgTable(
  'ledger_tx_conflicts',
  {
    /** sha256 of the rawId and the served version's immutable fields: the de-duplication key. */
    fingerprint: text('fingerprint').primaryKey(),
    rawId: bigint('raw_id', { mode: 'number' }).notNull(),
    /** The columns whose values differ (`amount`, `ledger_hash`, …). */
    fields: text('fields').array().notNull(),
    /** The version kept: the stored row when first detected (or the page's first sighting). */
    stored: jsonb('stored').notNull(),
    /** The version served instead, as columns (its latest sighting). */
    served: jsonb('served').notNull(),
    /** Stream and page that served it first; null for a re-read by hash. */
    streamKey: text('stream_key'),
    page: integer('page'),
    /** The `sync_runs` row of the walk, or the parallel backfill, that saw it first. */
    runId: bigint('run_id', { mode: 'number' }),
    backfillId: text('backfill_id'),
    detectedAt: tstz('detected_at').notNull(),
    seenAt: tstz('seen_at').notNull(),
    seenCount: integer('seen_count').notNull().default(1),
    /**
     * When an operator resolved it: the stored version stands. A resolved conflict no longer
     * counts in `status` or fails `verify` (by key, the same served version no longer differs),
     * and the same version served again keeps it resolved; another version opens a row of its own.
     */
    resolvedAt: tstz('resolved_at'),
  },
  (t) => [
    index('ledger_tx_conflicts_raw_id_idx').on(t.rawId),
    index('ledger_tx_conflicts_stream_idx').on(t.streamKey),
  ],
);

/** One row per `verify` completeness report (against the service): when, and whether it held. */
export const verifyRuns = pgTable(
  'verify_runs',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    startedAt: tstz('started_at').notNull(),
    finishedAt: tstz('finished_at').notNull(),
    /** Every stream complete, no conflict, no integrity mismatch, balances equal (exit 0). */
    complete: boolean('complete').notNull(),
    /** What the report found, in counts (`VerifySummary`): streams, conflicts, mismatches. */
    summary: jsonb('summary').notNull(),
  },
  (t) => [index('verify_runs_finished_idx').on(t.finishedAt)],
);

/**
 * Which ledger service the mirror holds, as one record of it (the anchor): its `rawId` and
 * `ledgerHash` never change, so the service must keep answering that hash with that rawId. One
 * row at most (`id` 1); none while the mirror is empty. `sync` and the workers refuse a service
 * that does not know the anchor; `sync --adopt-service` pins a record of the new one instead.
 */
export const mirroredService = pgTable('mirrored_service', {
  /** Always 1: the table holds one row. */
  id: integer('id').primaryKey().default(1),
  anchorRawId: bigint('anchor_raw_id', { mode: 'number' }).notNull(),
  anchorLedgerHash: text('anchor_ledger_hash').notNull(),
  /** The base URL the anchor was pinned from, password hidden: named when another service is refused. */
  serviceUrl: text('service_url').notNull(),
  pinnedAt: tstz('pinned_at').notNull(),
  /** The base URL that last answered the anchor, password hidden, and when: a run soon after trusts it. */
  verifiedUrl: text('verified_url'),
  verifiedAt: tstz('verified_at'),
});

/**
 * How a service's lists answered when asked (`LEDGER_PAGING=auto`), by list address: later runs
 * read in that dialect without asking again, until a list answer of the wrong shape makes a run
 * forget it.
 */
export const serviceDialects = pgTable('service_dialects', {
  /** The base address of the lists (`LEDGER_LIST_URL`), password hidden. */
  listUrl: text('list_url').primaryKey(),
  /** `key` or `page`. */
  paging: text('paging').notNull(),
  detectedAt: tstz('detected_at').notNull(),
});

// ---------------------------------------------------------------------------------------------
// Queue/worker tables (parallel-backfill proof and the like): append them below this line.
// ---------------------------------------------------------------------------------------------

/** One parallel backfill of a stream: the head it must reach and where its check stands. */
export const backfillRuns = pgTable(
  'backfill_runs',
  {
    id: text('id').primaryKey(),
    streamKey: text('stream_key').notNull(),
    /** The newest rawId on page 1 when the backfill began; the stream's watermark once proven. */
    headRawId: bigint('head_raw_id', { mode: 'number' }).notNull(),
    totalPages: integer('total_pages').notNull(),
    /** `running`, `done` or `failed`. */
    status: text('status').notNull(),
    /** Completeness checks made so far (each one repairs the gaps it found). */
    round: integer('round').notNull().default(0),
    /** Unproven rawId ranges left by the last check, as `[{lo, hi}]`. */
    gaps: jsonb('gaps'),
    error: text('error'),
    /**
     * The lowest rawId missing from a page a range job read before it could settle (see
     * `sync/settle.ts`): the stream's settled mark stays below it once the run is proven.
     */
    openGap: bigint('open_gap', { mode: 'number' }),
    /**
     * A catch-up of a stream far behind its head proves only `(floor, head]`: its records up to
     * `floor` (the stream's settled mark when the run began) were stored already. `null`: a first
     * backfill, from rawId 0.
     */
    floorRawId: bigint('floor_raw_id', { mode: 'number' }),
    /**
     * A catch-up's gaps at or below this rawId have settled already (a head waiting to settle that
     * had ripened when it began, `sync/settle.ts` `gapFloor`): only gaps above it keep the
     * stream's settled mark low. `null`: every gap its ranges read too soon counts.
     */
    gapFloorRawId: bigint('gap_floor_raw_id', { mode: 'number' }),
    createdAt: tstz('created_at').notNull(),
    finishedAt: tstz('finished_at'),
  },
  (t) => [uniqueIndex('backfill_runs_one_running_key').on(t.streamKey).where(sql`${t.status} = 'running'`)],
);

/**
 * RawId ranges of a stream proven complete: every record of the service with a rawId inside is
 * stored (a page's own span, or the space between two pages fetched one after the other).
 */
export const backfillProvenRanges = pgTable(
  'backfill_proven_ranges',
  {
    id: bigserial('id', { mode: 'number' }).primaryKey(),
    streamKey: text('stream_key').notNull(),
    lo: bigint('lo', { mode: 'number' }).notNull(),
    hi: bigint('hi', { mode: 'number' }).notNull(),
    /** The page the record at `lo` was seen on: a repair walk of the space below starts there. */
    loPage: integer('lo_page'),
    backfillId: text('backfill_id'),
    provenAt: tstz('proven_at').notNull(),
  },
  (t) => [index('backfill_proven_ranges_stream_idx').on(t.streamKey, t.lo)],
);

/**
 * The periodic jobs `schedule` asked for, per queue prefix: Redis holds the live BullMQ job
 * schedulers, this table what they should be, so workers register them again after Redis lost
 * its data.
 */
export const syncSchedules = pgTable(
  'sync_schedules',
  {
    queuePrefix: text('queue_prefix').notNull(),
    /** The BullMQ job scheduler id (`sync:<stream key>`, `reconcile`, `refresh-reference`). */
    schedulerId: text('scheduler_id').notNull(),
    jobName: text('job_name').notNull(),
    jobData: jsonb('job_data').notNull(),
    everyMs: bigint('every_ms', { mode: 'number' }).notNull(),
    updatedAt: tstz('updated_at').notNull(),
  },
  (t) => [primaryKey({ columns: [t.queuePrefix, t.schedulerId] })],
);

/**
 * Read-side indexes dropped for a first backfill into an empty mirror (see
 * `src/db/schema/deferred-indexes.ts`), with the definition each is built from again at its end. Empty
 * the rest of the time.
 */
export const deferredIndexes = pgTable('deferred_indexes', {
  name: text('name').primaryKey(),
  /** `pg_indexes.indexdef` as it was before the drop. */
  definition: text('definition').notNull(),
  deferredAt: tstz('deferred_at').notNull(),
});
