import type { PagingMode } from '../service-query/key-query.js';

/** Faults the simulator injects into the public query endpoints (never into `/_sim/`). */
export interface SimulatorFaults {
  /** Fixed delay added to every answer, in ms. Default 0. */
  latencyMs: number;
  /** Extra random delay in [0, latencyJitterMs) added on top, in ms. Default 0. */
  latencyJitterMs: number;
  /** Share of requests answered 500 or 503 (half each), 0..1. Default 0. */
  errorRate: number;
  /** Share of requests answered 429 with `Retry-After`, 0..1. Default 0. */
  rateLimitRate: number;
  /** `Retry-After` seconds sent with every 429. Default 1. */
  retryAfterSeconds: number;
  /** Share of requests that never get an answer (the socket stays open until closed), 0..1. Default 0. */
  hangRate: number;
  /** Share of 200 answers whose body is cut in half, 0..1. Default 0. */
  truncateRate: number;
  /**
   * Share of records served malformed (bad amount, missing rawId or broken internalStatus), 0..1.
   * Chosen by rawId, so a given record is malformed on every read while the share is unchanged.
   * Default 0.
   */
  malformedRate: number;
  /**
   * Share of records served tampered: a signed field (`amount`, one unit more) changed after
   * signing, `ledgerHash` and `sig` left as they were, so the recomputed hash and the recovered
   * signer no longer match. Chosen by rawId like `malformedRate`. Default 0.
   */
  tamperedRate: number;
  /**
   * Requests per second allowed to one client (the `x-client-id` header, else the remote
   * address); requests over it are answered 429 with `Retry-After`. 0 = unlimited. Default 0.
   */
  requestBudgetPerSecond: number;
}

/** Options of {@link createSimulator}. Every field is optional. */
export interface SimulatorOptions {
  /** Records present at start (all packaged). Default 1000. */
  records?: number;
  /** Seed of the data set: the same seed gives the same records. Default 1. */
  seed?: number | string;
  /** New records arriving at the head per second; 0 = none. Default 0. */
  arrivalsPerSecond?: number;
  /** Delay from `confirmed` to `packaged`, ms. Default 2000. */
  packageDelayMs?: number;
  /** Delay from packaging a burn to its `targetChainTxHash` appearing, ms. Default 5000. */
  burnTargetDelayMs?: number;
  /** Chance, per record, that rawIds are skipped before it (never published). Default 0.01. */
  holeRate?: number;
  /**
   * Share of arriving records (added by arrivals or {@link Simulator.addRecords}; never the
   * initial history nor `POST /tx`) that become visible late, as on a service whose writes commit
   * out of order, 0..1. Chosen by rawId from the seed. Default 0.
   */
  lateRate?: number;
  /**
   * How long a late record stays invisible after its arrival, ms: absent from every list, page
   * count, look-up and the ground truth while records with higher rawIds are listed; then in
   * its rawId place. Its status still changes counting from arrival. Default 1500.
   */
  lateMs?: number;
  /**
   * The list dialects served, on every list (`/txs`, `/txs?address=`, `/txs/{account}`,
   * `/txsByAccount/{account}`): `'page'` the interface document's page numbers only (`cursor`,
   * `order`, `count` ignored); `'key'` the deployed key dialect only (`page` ignored: every list
   * request gets `{txs, hasNextPage}`, newest first unless `order=asc`); `'both'` the key dialect
   * for a request with `cursor`, `order` or `count`, page numbers otherwise. Default `'both'`.
   */
  paging?: PagingMode;
  /**
   * A silent cap: at most this many records per key page, whatever `count` asks, with
   * `hasNextPage` true while more exist. 0 = no cap. Default 0.
   */
  maxCount?: number;
  /** A key request with `count` above this is answered 400 `err_invalid_count`. 0 = never. Default 0. */
  refuseCountAbove?: number;
  /** Cached JSON texts of records kept at most (oldest cached evicted first). Default 300000. */
  jsonCacheSize?: number;
  /** Timestamp of the newest record of the initial data set. Default 2026-01-01T00:00:00Z. */
  historyEndMs?: number;
  /** Wall clock, for tests. Default `Date.now`. */
  now?: () => number;
  /** Initial faults. Default none. */
  faults?: Partial<SimulatorFaults>;
}

/** A record as the service holds it now, plus what only the simulator knows. */
export interface GroundTruthRecord {
  rawId: number;
  id: string;
  tokenSymbol: string;
  action: string;
  from: string;
  to: string;
  amount: string;
  fee: string;
  feeRecipient: string;
  nonce: number;
  tokenID: string;
  chainType: string;
  chainID: string;
  data: string;
  /** Absent on some old records. */
  version?: string;
  sig: string;
  ledgerHash: string;
  status: string;
  internalStatus: string;
  timestamp: number;
  /** Absent on some old records. */
  targetChainTxHash?: string;
  /** Absent on some old records. */
  express?: { chainTxHash: string; withdrawFee: string; refundLedgerHash: string; err: string };
  /** The token's tag (from `/info`). */
  tokenTag: string;
  /** Wall-clock ms when the record arrived (for initial records: their ledger time). */
  arrivedAtMs: number;
  /**
   * Wall-clock ms when the service packaged it (its `timestamp`); null while `confirmed`. For
   * the initial history, packaged before the simulator started, its ledger `timestamp`.
   */
  packagedAtMs: number | null;
  /**
   * Wall-clock ms when its target-chain hash landed; null for every record but a burn whose
   * hash landed while the simulator ran (null while it waits, and for the initial history's burns,
   * which hold their hash from the start).
   */
  targetLandedAtMs: number | null;
  /** Set when the public endpoints serve this record malformed: which way. */
  malformed?: MalformedKind;
  /** Set when the public endpoints serve this record tampered; the fields above are the tampered ones, as served. */
  tampered?: true;
}

/** The ways a record can be served malformed. */
export type MalformedKind = 'bad_amount' | 'missing_raw_id' | 'broken_internal_status';

/** Requests served, by route and HTTP status: `{ "GET /txs": { "200": 12, "503": 1 } }`. */
export type SimulatorStats = Record<string, Record<string, number>>;

/** List requests served, by the dialect they were answered in (every status and fault counted). */
export interface ListRequestStats {
  /** Answered in the key dialect (`{txs, hasNextPage}`). */
  keyRequests: number;
  /** Answered with page numbers (`{currentPage, totalPages, txs}`). */
  pageRequests: number;
}

/** A running (or ready to run) reference ledger server. */
export interface Simulator {
  /** Starts serving HTTP. Defaults: host 127.0.0.1, port 0 (any free port). */
  listen(options?: { host?: string; port?: number }): Promise<{ url: string }>;
  /** Stops arrivals, drops hanging requests and closes the server. */
  close(): Promise<void>;
  /**
   * Appends `n` new records at the head (as `confirmed`); returns the highest rawId given out,
   * which may belong to a late record not visible yet.
   */
  addRecords(n: number): number;
  pauseArrivals(): void;
  resumeArrivals(): void;
  /** Packages every `confirmed` record, lands every burn's target hash and shows every late record now. */
  settleAll(): void;
  /** Changes some faults; returns the faults now in force. */
  setFaults(partial: Partial<SimulatorFaults>): SimulatorFaults;
  faults(): SimulatorFaults;
  /** Every record the service shows now, in rawId order (late records only once visible). */
  records(options?: { afterRawId?: number }): IterableIterator<GroundTruthRecord>;
  /** Number of records visible now (malformed ones included, late ones still hidden not). */
  count(): number;
  /** The highest visible rawId, or 0. */
  headRawId(): number;
  /** Requests served by route and status. */
  stats(): SimulatorStats;
  /** List requests served by dialect (reset with the route counts). */
  listRequests(): ListRequestStats;
}
