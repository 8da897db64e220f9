/**
 * The in-memory store of the unit tests: the sync engine's ports (`SyncStore`, `BackfillStore`)
 * kept in maps, behaving as the PostgreSQL store does (`store-conformance.ts` runs the same
 * behaviour suite against both): leases with fencing numbers and expiry on a given clock, fenced
 * checkpoints, idempotent upserts keyed by rawId that leave unchanged rows alone, the re-read
 * queue with its backoff (the record tables are in `memory-records.ts`), backfill runs and proven
 * ranges.
 */

import type { RereadPolicy } from '../../src/db/write/reread-queue.js';
import { asPageCheckpoint } from '../../src/domain/checkpoints.js';
import { isHeld, lastPageOf } from '../../src/domain/commit-pages.js';
import type { KeyAnswerText, LedgerTx } from '../../src/domain/model.js';
import { mergeRanges, provenPrefixEnd, type RawIdRange } from '../../src/domain/raw-id-ranges.js';
import type { StreamSpec } from '../../src/domain/stream-key.js';
import { normaliseSpec, streamKey } from '../../src/domain/stream-key.js';
import { CommitLostError, LeaseLostError } from '../../src/errors.js';
import type {
  BackfillRun,
  BackfillStore,
  NewBackfillRun,
  RangePage,
  ReadAhead,
} from '../../src/sync/ports/backfill-store.js';
import type {
  ClaimedRecord,
  PageCommit,
  PendingRecord,
  ProofScope,
  ReleaseOutcome,
  SettleState,
  StoredGap,
  StreamLease,
  StreamState,
  SyncStore,
  WriteCounts,
} from '../../src/sync/ports/sync-store.js';
import { MemoryRecords } from './memory-records.js';

/** Options of {@link MemoryStore}. */
export interface MemoryStoreOptions {
  /** The clock for leases, first sightings and re-read scheduling. Default `new Date()`. */
  now?: () => Date;
  /** Re-read schedule; each field defaults as in `DEFAULT_REREAD_POLICY`. */
  recheck?: Partial<RereadPolicy>;
}

/** A stream's row: its state and its lease. */
export interface MemoryStream extends StreamState {
  fence: number;
  owner: string | null;
  /** Lease expiry (ms since the epoch), null once released. */
  expiresAt: number | null;
  /** Lease length asked for at acquisition: each committed page extends the lease by it. */
  leaseMs: number;
  lastError?: string;
  lastSuccessAt?: Date;
  errorStreak: number;
}

interface RunRow extends BackfillRun {
  gaps: RawIdRange[];
  error: string | null;
}

/** The sync engine's store, in memory. */
export class MemoryStore extends MemoryRecords implements SyncStore, BackfillStore {
  readonly streams = new Map<string, MemoryStream>();
  /** Accepted page commits, in order. */
  readonly commits: PageCommit[] = [];
  readonly runs = new Map<string, RunRow>();
  /** Proven-range rows by stream key, as committed (merged only by compaction). */
  /** Each stream's proven ranges, with the run that proved each (`null` once compacted). */
  readonly proven = new Map<string, Array<RawIdRange & { backfillId?: string | null }>>();
  /** Set to make the next commit of this page fail before writing (a crash mid-walk). */
  failCommitAtPage: number | null = null;
  /** How long each page commit takes, ms . Default none. */
  commitDelayMs: (() => number) | null = null;
  private readonly now: () => Date;

  constructor(options: MemoryStoreOptions = {}) {
    super(options.recheck);
    this.now = options.now ?? (() => new Date());
  }

  async acquireStream(spec: StreamSpec, owner: string, leaseMs: number) {
    const key = streamKey(spec);
    const at = this.now().getTime();
    let row = this.streams.get(key);
    if (row === undefined) {
      row = {
        key,
        spec: normaliseSpec(spec),
        watermark: null,
        walk: null,
        settle: { settled: null, pending: null },
        fence: 1,
        owner,
        expiresAt: null,
        leaseMs,
        errorStreak: 0,
      };
      this.streams.set(key, row);
    } else {
      const live = row.owner !== null && row.expiresAt !== null && row.expiresAt > at;
      if (live && row.owner !== owner) {
        throw new LeaseLostError(
          key,
          `held by ${row.owner} until ${new Date(row.expiresAt ?? 0).toISOString()}`,
        );
      }
      // The same owner renewing its live lease keeps the fence; any other taking gets a new one.
      if (!live) row.fence++;
      row.owner = owner;
      row.leaseMs = leaseMs;
    }
    row.expiresAt = at + leaseMs;
    const lease: StreamLease = { key, fence: row.fence, owner };
    const state: StreamState = structuredClone({
      key,
      spec: row.spec,
      watermark: row.watermark,
      walk: row.walk,
      settle: row.settle,
    });
    return { lease, state };
  }

  async commitPage(commit: PageCommit): Promise<WriteCounts> {
    const delayMs = this.commitDelayMs?.() ?? 0;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    const at = this.now();
    const row = this.fenced(commit.lease);
    const page = lastPageOf(commit);
    if (this.failCommitAtPage === page) {
      this.failCommitAtPage = null;
      throw new Error('process killed');
    }
    const { lease } = commit;
    const storedNext = asPageCheckpoint(row.walk)?.nextPage ?? 1;
    const storedCursor = row.walk?.cursor ?? null;
    if (commit.fromCursor !== undefined && storedCursor !== commit.fromCursor) {
      const detail = `its checkpoint is at rawId ${storedCursor ?? 'none'}, where this commit follows on from ${commit.fromCursor ?? 'none'}`;
      throw new CommitLostError(lease.key, detail, 'page-write');
    }
    if (commit.fromPage !== undefined && storedNext !== commit.fromPage) {
      const detail = `its checkpoint leads to page ${storedNext}, where this commit follows on from page ${commit.fromPage}`;
      throw new CommitLostError(lease.key, detail, 'page-write');
    }
    if (row.owner === lease.owner && row.fence === lease.fence && row.expiresAt !== null) {
      row.expiresAt = Math.max(row.expiresAt, at.getTime() + row.leaseMs);
    }
    row.walk = structuredClone(commit.walk);
    row.watermark = commit.watermark;
    if (commit.settle) row.settle = structuredClone(commit.settle);
    // Every sighting, repeats included: a repeat that disagrees is a conflict, as in PostgreSQL.
    const written = this.writeBatch(
      commit.pages.flatMap((p) => p.records),
      at,
      true,
    );
    const rejected = [...commit.rejected, ...written.refused];
    this.keepRejected(rejected, lease.key, page);
    this.commits.push(structuredClone(commit));
    return { ...written.counts, rejected: rejected.length };
  }

  async advanceWatermark(
    lease: StreamLease,
    watermark: number,
    options: { settle?: SettleState | undefined; proven?: ProofScope | undefined } = {},
  ): Promise<void> {
    const row = this.fenced(lease);
    const scope = options.proven;
    if (scope !== undefined) {
      const { floor, backfillId } = scope;
      const mark = row.settle.settled ?? row.watermark;
      const proofs =
        floor === null
          ? (this.proven.get(lease.key) ?? [])
          : [
              ...(floor >= 0 && mark !== null && mark >= floor ? [{ lo: 0, hi: floor }] : []),
              ...(this.proven.get(lease.key) ?? []).filter((r) => r.backfillId === backfillId),
            ];
      if ((provenPrefixEnd(proofs) ?? -1) < watermark)
        throw new CommitLostError(
          lease.key,
          `its proven ranges no longer reach rawId ${watermark}`,
          'watermark-write',
        );
    }
    // A repair proved the whole list from rawId 0 itself: its head is the watermark, its walk over.
    const repair = scope?.floor !== null && scope?.floor !== undefined && scope.floor < 0;
    row.watermark = repair ? watermark : Math.max(row.watermark ?? watermark, watermark);
    if (repair) row.walk = null;
    if (options.settle) row.settle = structuredClone(options.settle);
  }

  async releaseStream(lease: StreamLease, outcome: ReleaseOutcome) {
    const row = this.streams.get(lease.key);
    // A stale lease releases nothing and records nothing.
    if (row === undefined || row.fence !== lease.fence || row.owner !== lease.owner) return;
    row.owner = null;
    row.expiresAt = null;
    if (outcome.ok) {
      row.lastSuccessAt = this.now();
      row.errorStreak = 0;
    } else if (!outcome.stopped) {
      row.lastError = outcome.error.slice(0, 4000);
      row.errorStreak++;
    }
  }

  async duePending(limit: number, now: Date): Promise<PendingRecord[]> {
    return this.dueAt(now).slice(0, limit);
  }

  /** Claims due records as the PostgreSQL store does; ranks count the stored records above. */
  async claimDue(
    limit: number,
    now: Date,
    options: { rankLimit?: number; dueBy?: Date | undefined } = {},
  ): Promise<ClaimedRecord[]> {
    const rankLimit = options.rankLimit ?? 0;
    const claimed = this.dueAt(options.dueBy ?? now).slice(0, limit);
    const ids = [...this.rows.keys()];
    const rank = (rawId: number, burnsOnly: boolean): number | null => {
      if (rankLimit === 0) return null;
      const above = ids.filter(
        (id) => id > rawId && (!burnsOnly || this.rows.get(id)?.action === 'burn'),
      ).length;
      return above >= rankLimit ? null : above;
    };
    for (const record of claimed) {
      const entry = this.rechecks.get(record.rawId);
      if (entry) entry.dueAt = now.getTime() + this.policy.claimMs;
    }
    return claimed
      .map((record) => ({
        ...record,
        listRank: rank(record.rawId, false),
        burnRank: this.rows.get(record.rawId)?.action === 'burn' ? rank(record.rawId, true) : null,
      }))
      .sort((a, b) => b.rawId - a.rawId);
  }

  async storedGaps(input: {
    above: number;
    upTo: number;
    rankUpTo: number;
    limit: number;
  }): Promise<StoredGap[] | null> {
    const ids = [...this.rows.keys()].sort((a, b) => b - a);
    const low = ids.find((id) => id <= input.above);
    if (low === undefined) return null;
    const high = ids.includes(input.upTo) ? input.upTo : ids.filter((id) => id > input.upTo).at(-1);
    if (high === undefined) return null;
    const span = ids.filter((id) => id >= low && id <= high);
    const gaps: StoredGap[] = [];
    for (let i = 0; i + 1 < span.length; i++) {
      const [above, below] = [span[i]!, span[i + 1]!];
      if (above - below <= 1) continue;
      const rank = ids.filter((id) => id > above && id <= input.rankUpTo).length;
      gaps.push({ above, below, rank });
    }
    return gaps.length > input.limit ? null : gaps;
  }

  /** The records due for a re-read at the store's clock (what `duePending` answers now). */
  get pending(): PendingRecord[] {
    return this.dueAt(this.now());
  }

  /** Puts a stored record on the re-read queue, due now unless told otherwise. */
  queueReread(rawId: number, options: { attempts?: number; dueAt?: Date } = {}): void {
    if (!this.rows.has(rawId)) throw new Error(`rawId ${rawId} is not stored`);
    const dueAt = (options.dueAt ?? this.now()).getTime();
    this.rechecks.set(rawId, { dueAt, attempts: options.attempts ?? 0 });
  }

  async commitReread(input: {
    records: LedgerTx[];
    missing: PendingRecord[];
    now: Date;
    seen?: LedgerTx[] | undefined;
  }): Promise<WriteCounts> {
    const seen = (input.seen ?? []).filter((tx) => this.rechecks.has(tx.rawId));
    const written = this.writeBatch([...input.records, ...seen], input.now, false);
    this.keepRejected(written.refused, null, null);
    const reread = [
      ...written.kept,
      // What could not be stored or found is retried later like a record not final, until given up.
      ...[...input.missing, ...written.refused].flatMap((r) =>
        r.rawId === undefined ? [] : [{ rawId: r.rawId, pending: 'missing' as const }],
      ),
    ];
    this.reschedule(reread, input.now);
    return { ...written.counts, rejected: written.refused.length };
  }

  async startRun(run: NewBackfillRun): Promise<BackfillRun | null> {
    if (
      this.runs.has(run.id) ||
      [...this.runs.values()].some((r) => r.key === run.key && r.status === 'running')
    ) {
      return null;
    }
    const headAt = this.now().getTime();
    this.runs.set(run.id, {
      ...run,
      status: 'running',
      round: 0,
      headAt,
      openGap: null,
      floor: run.floor ?? null,
      gapFloor: run.gapFloor ?? null,
      gaps: [],
      error: null,
    });
    return this.getRun(run.id);
  }

  async getRun(id: string): Promise<BackfillRun | null> {
    const run = this.runs.get(id);
    if (run === undefined) return null;
    const { gaps: _gaps, error: _error, ...stored } = run;
    return { ...stored };
  }

  async runningRun(key: string): Promise<BackfillRun | null> {
    const run = [...this.runs.values()].find((r) => r.key === key && r.status === 'running');
    return run === undefined ? null : this.getRun(run.id);
  }

  async streamStarted(key: string): Promise<boolean> {
    const row = this.streams.get(key);
    return row !== undefined && (row.watermark !== null || row.walk !== null);
  }

  async commitRangePages(input: {
    key: string;
    backfillId: string;
    pages: RangePage[];
    proven: RawIdRange[];
  }): Promise<WriteCounts> {
    const at = this.now();
    const run = this.runs.get(input.backfillId);
    for (const page of input.pages) {
      if (run && page.openGap !== undefined && page.openGap !== null)
        run.openGap = Math.min(run.openGap ?? page.openGap, page.openGap);
    }
    // This store reads nothing ahead: every page's records are the walk's.
    const records = input.pages.map((page) => {
      if (isHeld(page.records)) throw new Error('the memory store reads nothing ahead');
      return page.records;
    });
    const pageOf = new Map<number, number>();
    input.pages.forEach((page, i) => {
      for (const tx of records[i]!) pageOf.set(tx.rawId, page.page);
    });
    const written = this.writeBatch(records.flat(), at, true);
    // Each rejected record is reported with the page it was served on.
    const lastPage = input.pages[input.pages.length - 1]?.page ?? null;
    let rejectedCount = 0;
    for (const page of input.pages) {
      const rejected = [
        ...page.rejected,
        ...written.refused.filter(
          (r) => (r.rawId === undefined ? lastPage : pageOf.get(r.rawId)) === page.page,
        ),
      ];
      rejectedCount += rejected.length;
      this.keepRejected(rejected, input.key, page.page);
    }
    const ranges = this.proven.get(input.key) ?? [];
    ranges.push(...input.proven.map((r) => ({ ...r, backfillId: input.backfillId })));
    this.proven.set(input.key, ranges);
    return { ...written.counts, rejected: rejectedCount };
  }

  async provenRanges(key: string, backfillId?: string): Promise<RawIdRange[]> {
    const ranges = this.proven.get(key) ?? [];
    return withoutRun(
      mergeRanges(backfillId === undefined ? ranges : ranges.filter((r) => r.backfillId === backfillId)),
    );
  }

  async compactProvenRanges(key: string): Promise<number> {
    const merged = withoutRun(mergeRanges(this.proven.get(key) ?? []));
    this.proven.set(key, merged);
    return merged.length;
  }

  /** Reads nothing ahead: the walk parses every answer. */
  async readAhead(
    _answer: KeyAnswerText,
    _window: { after: number | null; upTo: number },
  ): Promise<ReadAhead | null> {
    return null;
  }

  async storedAbove(rawId: number): Promise<number> {
    return this.countAbove(rawId);
  }

  async recordCheck(input: Parameters<BackfillStore['recordCheck']>[0]): Promise<void> {
    const run = this.runs.get(input.id);
    if (run === undefined || run.status !== 'running') return;
    Object.assign(run, {
      round: Math.max(run.round, input.round),
      gaps: input.gaps,
      status: input.status,
      error: input.error ?? null,
    });
  }

  /** The stream row, when `lease` still holds it: no newer fence was handed out since. */
  private fenced(lease: StreamLease): MemoryStream {
    const row = this.streams.get(lease.key);
    if (row === undefined) throw new LeaseLostError(lease.key, 'the stream does not exist');
    if (row.fence > lease.fence) {
      throw new LeaseLostError(
        lease.key,
        `fence ${lease.fence} is stale: the stream is at fence ${row.fence} (owner ${row.owner ?? 'none'})`,
      );
    }
    return row;
  }
}

/** Merged ranges as the port gives them: without the run that proved them. */
function withoutRun(ranges: readonly RawIdRange[]): RawIdRange[] {
  return ranges.map(({ lo, hi, loPage }) => (loPage === undefined ? { lo, hi } : { lo, hi, loPage }));
}
