/**
 * Array-backed implementations of the sync engine's ports (it is handed its store and fetch): a
 * live newest-first list served page by page, and a store keeping rows and stream state in maps.
 */
import type { LedgerTx, RejectedRecord, TxPage } from '../../src/client/types.js';
import { LeaseLostError } from '../../src/errors.js';
import type {
  FetchPage,
  PageCommit,
  PendingRecord,
  StreamLease,
  StreamSpec,
  StreamState,
  SyncStore,
  WriteCounts,
} from '../../src/sync/ports.js';
import { streamKey } from '../../src/sync/stream-key.js';
import { makeLedgerTx } from '../helpers/ledger-tx.js';

/** A `confirmed` record of a busy pair of accounts, with an amount past 2^64. */
export function makeTx(rawId: number, overrides: Partial<LedgerTx> = {}): LedgerTx {
  return makeLedgerTx({
    rawId,
    id: '',
    tokenSymbol: 'USDT',
    from: '0xaaa',
    to: rawId % 3 === 0 ? '0xbbb' : '0xccc',
    amount: `${rawId}000000000000000000000000000000000000000000000000000000000000000000000000000`,
    fee: '1',
    feeRecipient: '0xfee',
    nonce: String(1_700_000_000_000 + rawId),
    tokenID: '0xdac',
    status: 'confirmed',
    timestamp: 0,
    ...overrides,
  });
}

/** A newest-first list that grows at the head, served in pages of 10 as the real service does. */
export class LiveList {
  /** Ascending by rawId; the page view reverses it. */
  readonly records: LedgerTx[] = [];
  private nextRawId: number;
  private readonly step: () => number;
  /** Pages served, in the order the "server" computed them. */
  readonly served: number[] = [];
  /** Called right after a page is computed: arrivals between requests go here. */
  afterServe: (page: number) => void = () => {};
  /** Called before a page is computed; may replace the answer. */
  override: (page: number, attempt: number) => TxPage | undefined = () => undefined;
  /** Upper bound of the random delay before a request is answered, in ms. */
  jitterMs = 0;
  private readonly attempts = new Map<number, number>();

  constructor(options: { count: number; firstRawId?: number; step?: () => number }) {
    this.nextRawId = options.firstRawId ?? 1;
    this.step = options.step ?? (() => 1);
    this.add(options.count);
  }

  /** Appends `n` records at the head. */
  add(n: number): void {
    for (let i = 0; i < n; i++) {
      this.records.push(makeTx(this.nextRawId));
      this.nextRawId += this.step();
    }
  }

  page(page: number): TxPage {
    const newestFirst = [...this.records].reverse();
    return {
      currentPage: page,
      totalPages: Math.ceil(newestFirst.length / 10),
      txs: newestFirst.slice((page - 1) * 10, page * 10),
      rejected: [],
    };
  }

  readonly fetchPage: FetchPage = async (_spec: StreamSpec, page: number) => {
    if (this.jitterMs > 0) await new Promise((r) => setTimeout(r, Math.random() * this.jitterMs));
    const attempt = (this.attempts.get(page) ?? 0) + 1;
    this.attempts.set(page, attempt);
    const answer = this.override(page, attempt) ?? this.page(page);
    this.served.push(page);
    this.afterServe(page);
    return structuredClone(answer);
  };
}

/** A store keeping rows and stream state in memory, with the lease fencing of the real one. */
export class MemoryStore implements SyncStore {
  readonly rows = new Map<number, LedgerTx>();
  readonly rejected: Array<RejectedRecord & { stream: string; page: number }> = [];
  readonly streams = new Map<
    string,
    StreamState & { fence: number; owner: string | null; lastError?: string }
  >();
  readonly commits: PageCommit[] = [];
  /** Set to make the next commit of this page fail (a crash mid-walk). */
  failCommitAtPage: number | null = null;
  pending: PendingRecord[] = [];
  rereads: Array<{ records: LedgerTx[]; missing: PendingRecord[] }> = [];

  async acquireStream(spec: StreamSpec, owner: string, _leaseMs: number) {
    const key = streamKey(spec);
    const row = this.streams.get(key) ?? { key, spec, watermark: null, walk: null, fence: 0, owner: null };
    if (row.owner !== null && row.owner !== owner) throw new LeaseLostError(key, `held by ${row.owner}`);
    row.fence++;
    row.owner = owner;
    this.streams.set(key, row);
    const state: StreamState = structuredClone({ key, spec, watermark: row.watermark, walk: row.walk });
    return { lease: { key, fence: row.fence, owner }, state };
  }

  async commitPage(commit: PageCommit): Promise<WriteCounts> {
    const row = this.streams.get(commit.lease.key);
    if (!row || row.fence !== commit.lease.fence) throw new LeaseLostError(commit.lease.key, 'stale fence');
    if (this.failCommitAtPage === commit.page) {
      this.failCommitAtPage = null;
      throw new Error('process killed');
    }
    const counts: WriteCounts = {
      inserted: 0,
      updated: 0,
      unchanged: 0,
      rejected: commit.rejected.length,
      conflicts: 0,
    };
    for (const tx of commit.records) {
      const before = this.rows.get(tx.rawId);
      if (!before) counts.inserted++;
      else if (JSON.stringify(before) === JSON.stringify(tx)) counts.unchanged++;
      else counts.updated++;
      this.rows.set(tx.rawId, structuredClone(tx));
    }
    for (const r of commit.rejected)
      this.rejected.push({ ...r, stream: commit.lease.key, page: commit.page });
    row.walk = structuredClone(commit.walk);
    row.watermark = commit.watermark;
    this.commits.push(structuredClone(commit));
    return counts;
  }

  async advanceWatermark(lease: StreamLease, watermark: number) {
    const row = this.streams.get(lease.key);
    if (!row || row.fence !== lease.fence) throw new LeaseLostError(lease.key, 'stale fence');
    row.watermark = Math.max(row.watermark ?? watermark, watermark);
  }

  async releaseStream(lease: StreamLease, outcome: { ok: true } | { ok: false; error: string }) {
    const row = this.streams.get(lease.key);
    if (row && row.fence === lease.fence) {
      row.owner = null;
      if (!outcome.ok) row.lastError = outcome.error;
    }
  }

  async duePending(limit: number): Promise<PendingRecord[]> {
    return this.pending.slice(0, limit);
  }

  async commitReread(input: {
    records: LedgerTx[];
    missing: PendingRecord[];
    now: Date;
  }): Promise<WriteCounts> {
    this.rereads.push({ records: input.records, missing: input.missing });
    const counts: WriteCounts = { inserted: 0, updated: 0, unchanged: 0, rejected: 0, conflicts: 0 };
    for (const tx of input.records) {
      const before = this.rows.get(tx.rawId);
      if (before && JSON.stringify(before) === JSON.stringify(tx)) counts.unchanged++;
      else counts.updated++;
      this.rows.set(tx.rawId, tx);
    }
    const settled = new Set([
      ...input.records.filter((tx) => tx.status === 'packaged').map((tx) => tx.ledgerHash),
      ...input.missing.map((m) => m.ledgerHash),
    ]);
    // Unsettled records are rescheduled into the future: no longer due now.
    const touched = new Set([...input.records.map((tx) => tx.ledgerHash), ...settled]);
    this.pending = this.pending.filter((p) => !touched.has(p.ledgerHash) && !settled.has(p.ledgerHash));
    return counts;
  }
}

/** The rawIds stored, ascending. */
export function storedIds(store: MemoryStore): number[] {
  return [...store.rows.keys()].sort((a, b) => a - b);
}
