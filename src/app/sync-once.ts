import { anySignal } from '../abort.js';
import type { LedgerClient } from '../client/ledger-client.js';
import { PAGE_SIZE, REFERENCE_REFRESH_MS } from '../defaults.js';
import { leaseOwnerName } from '../domain/lease-owner.js';
import type { LedgerToken, TxListFilter } from '../domain/model.js';
import type { StreamSpec } from '../domain/stream-key.js';
import { isGlobalList } from '../domain/stream-key.js';
import { KEY_REQUESTS_PER_RANGE } from '../sync/backfill/key-backfill.js';
import { syncByKey } from '../sync/backfill/key-sync.js';
import { syncByPage } from '../sync/backfill/page-sync.js';
import type { BackfillStore } from '../sync/ports/backfill-store.js';
import type { FetchKeyPage, FetchPage } from '../sync/ports/fetches.js';
import { type DeferredIndexes, indexesPayToDefer } from '../sync/ports/read-indexes.js';
import type { SyncStore } from '../sync/ports/sync-store.js';
import { type RereadResult, rereadPending } from '../sync/reread/reread-pending.js';
import { listsAfterWalk } from '../sync/reread/reread-plan.js';
import type { SyncLogger } from '../sync/sync-logger.js';
import type { PageEvent, WalkResult } from '../sync/walk/walk-types.js';
import type { ListDialects } from './list-dialect.js';
import type { MirroredService } from './mirrored-service.js';
import {
  createFetchByHash,
  createFetchKeyHead,
  createFetchKeyPage,
  createFetchKeyText,
  createFetchPage,
} from './sync-adapters.js';

/**
 * What a one-shot sync needs; the context of `createContext` (src/context.ts) satisfies it, so a
 * queue job can hand over the same object.
 */
export interface SyncContext {
  config: {
    concurrency: number;
    writers?: number | undefined;
    settleMs?: number | undefined;
    /** The request budget (`LEDGER_REQUESTS_PER_SECOND`; 0: none). */
    requestsPerSecond?: number | undefined;
  };
  logger: SyncLogger;
  client: LedgerClient;
  store: SyncStore;
  /** The proofs of a first backfill by key in lanes; without it, such a backfill is one walk. */
  backfills?: BackfillStore | undefined;
  /** Defers the read-side indexes of a first backfill; without it they are kept up throughout. */
  indexes?: DeferredIndexes | undefined;
  /** Stores the tokens of `/info`; token refresh is skipped without it. */
  saveTokens?: ((tokens: LedgerToken[]) => Promise<unknown>) | undefined;
  /** When `/info` was last stored; without it, every run refreshes the tokens. */
  tokensListedAt?: (() => Promise<Date | null>) | undefined;
  /** Refuses a service other than the one the mirror holds; without it, any service is synced. */
  service?: Pick<MirroredService, 'ensure' | 'pinFirstRecord'> | undefined;
  /**
   * The dialect of the list reads, kept across runs (see `list-dialect.ts`), and forgotten after a
   * list answer of the wrong shape; without it, the client's answer of this run.
   */
  dialects?: ListDialects | undefined;
}

/** What to sync. */
export interface SyncOptions extends TxListFilter {
  /** Accounts to sync, one stream each; none: the global list. */
  accounts?: readonly string[] | undefined;
  /** Re-walk every stream from page 1. Default false. */
  full?: boolean | undefined;
  /**
   * Sync the service even though the mirror holds another one's records, and recognise the
   * mirror by this service from now on (`--adopt-service`). Default false: such a run is refused
   * with `ServiceMismatchError` before anything is written.
   */
  adoptService?: boolean | undefined;
  /** The lease owner; default `sync:<host>:<pid>:<random>`. */
  owner?: string | undefined;
  /** Re-read non-final records after the walks. Default true. */
  reread?: boolean | undefined;
  /** @deprecated The former name of {@link reread}; `reread` wins where both are given. */
  reconcile?: boolean | undefined;
  /**
   * Refresh tokens from `/info` first: `true` always, `false` never. Default: when the stored
   * list is older than ten minutes (and the context can save them), as the workers do.
   */
  refreshTokens?: boolean | undefined;
  /** Most records re-read in this run. Default: all that are due. */
  maxRereads?: number | undefined;
  /** Stops the run at the next page boundary: pages in flight are awaited and committed. */
  signal?: AbortSignal | undefined;
  /**
   * Abandons the requests in flight and their retries (the run then fails with the signal's
   * reason; what was committed stays). For a stop that cannot wait for a slow or hanging service.
   */
  requestSignal?: AbortSignal | undefined;
  onPage?: ((event: PageEvent) => void) | undefined;
  /** Called when a stream's walk begins, with its spec. */
  onStream?: ((spec: StreamSpec) => void) | undefined;
}

/** What {@link syncOnce} did. */
export interface SyncResult {
  /** Tokens refreshed from `/info`, `null` when not refreshed. */
  tokens: number | null;
  streams: WalkResult[];
  /** What the re-read of non-final records after the walks did; `null` when none ran. */
  reread: RereadResult | null;
  /** @deprecated The same as {@link reread}, under its former name. */
  reconcile: RereadResult | null;
  /** The signal stopped the run before everything was up to date. */
  stopped: boolean;
}

/** The streams of a sync: one per account, or the global list, each with the same filters. */
export function streamSpecs(options: SyncOptions): StreamSpec[] {
  const filter: TxListFilter = {
    tokenTag: options.tokenTag,
    action: options.action,
    withoutAction: options.withoutAction,
  };
  const accounts = [...new Set(options.accounts ?? [])];
  return accounts.length === 0 ? [{ ...filter }] : accounts.map((account) => ({ account, ...filter }));
}

/**
 * Pages a walk by page number keeps in flight: as many as the client sizes to its budget at the
 * distance measured, and at least {@link PAGE_WINDOW_FLOOR} (at most LEDGER_CONCURRENCY).
 */
export function pageWindow(inFlight: number, ceiling: number): number {
  return Math.min(ceiling, Math.max(PAGE_WINDOW_FLOOR, inFlight));
}

/**
 * Pages in flight near the service, where the machine is the limit: a page is ten records, so the
 * client's size (taken for answers of a hundred) would leave the walk waiting; eight was the
 * fixed window before it followed the budget.
 */
const PAGE_WINDOW_FLOOR = 8;

/**
 * The lanes of a first backfill by key: as many as the client keeps requests in flight (the
 * budget × the answer time it measures, `in-flight.ts`), and at least one more than the writers:
 * near the service, each lane also waits on its answers, and with the records encoded on another
 * thread a third lane beside two writers fills that wait (docs/performance.md). One walk for one
 * writer (the embedded database).
 */
function keyLanes(ctx: Pick<SyncContext, 'client' | 'config'>): number | (() => number) {
  const writers = ctx.config.writers ?? 2;
  if (writers <= 1) return 1;
  return () => Math.max(writers + 1, ctx.client.inFlight());
}

/**
 * The one-shot sync: refreshes tokens, walks each stream (backfill where never synced, else tail)
 * one after another, then re-reads the non-final records that are due. Into an empty mirror the
 * read-side indexes are dropped first and built after the walks. Throws on the first
 * stream that fails; streams already walked keep what they committed. First of all, refuses a
 * service other than the one the mirror holds (`ServiceMismatchError`, nothing written).
 */
export async function syncOnce(ctx: SyncContext, options: SyncOptions = {}): Promise<SyncResult> {
  const startedAt = new Date();
  const owner = options.owner ?? leaseOwnerName('sync');
  const result: SyncResult = { tokens: null, streams: [], reread: null, reconcile: null, stopped: false };
  // Before anything is written: a mirror of one service is never filled from another.
  const service = await ctx.service?.ensure({ adopt: options.adoptService, signal: options.requestSignal });
  // The token list is read while the streams are walked (an answer's wait, a tenth of a second of
  // a short backfill by page number) and saved after them. A failure to read it stops the walks,
  // as a stop signal does (what they read is committed), and is thrown.
  const tokensFailed = new AbortController();
  const tokens = readTokens(ctx, options);
  tokens.catch((error: unknown) => tokensFailed.abort(error));
  const walking = {
    ...options,
    signal: anySignal([options.signal, tokensFailed.signal]),
    requestSignal: anySignal([options.requestSignal, tokensFailed.signal]),
  };
  // By key where the service speaks it (LEDGER_PAGING; `auto` asks it once), else by page number.
  const dialect = await (ctx.dialects?.resolve(walking.requestSignal) ??
    ctx.client.listDialect({ signal: walking.requestSignal }));
  const fetchPage = createFetchPage(ctx.client, walking.requestSignal);
  const fetchKeyPage = createFetchKeyPage(ctx.client, walking.requestSignal);
  const specs = streamSpecs(options);
  // Into an empty mirror, the read-side indexes are built once the walks are done, unless the
  // request budget, not the writes, bounds the backfill.
  const perRequest = dialect === 'key' ? ctx.client.keyCount() : PAGE_SIZE;
  if (indexesPayToDefer(ctx.config.requestsPerSecond, perRequest)) await ctx.indexes?.defer();
  for (const spec of specs) {
    if (walking.signal.aborted) break;
    options.onStream?.(spec);
    const walked = await syncStream(ctx, walking, { spec, owner, dialect, fetchPage, fetchKeyPage }).catch(
      async (error: unknown) => {
        if (tokensFailed.signal.aborted) throw tokensFailed.signal.reason;
        await ctx.dialects?.forgetOn(error);
        // Saved still, as when they were read first; settled before the run's pool closes.
        await saveTokens(ctx, await tokens.catch(() => null)).catch(() => null);
        throw error;
      },
    );
    await ctx.dialects?.recordRun(walked.key, dialect);
    result.streams.push(walked);
  }
  result.tokens = await saveTokens(ctx, await tokens);
  // A run stopped before its walks finished leaves them deferred: the run that ends the backfill
  // builds them (and `verify`, `migrate` or a pending migration, if one comes first).
  if (!options.signal?.aborted && result.streams.every((walk) => walk.finished)) {
    await ctx.indexes?.restore({ whenIdle: true });
  }
  if (service?.state === 'empty') await ctx.service?.pinFirstRecord();
  if ((options.reread ?? options.reconcile) !== false && !options.signal?.aborted) {
    // Through list pages only when the global list is mirrored whole: a record's rank among the
    // stored ones is then its place in the list. Its tail walk read the head pages already.
    const global = result.streams.find(
      (walk, i) => walk.finished && isGlobalList(specs[i] ?? { account: '' }),
    );
    const byKey = global?.dialect === 'key';
    result.reread = await rereadPending({
      store: ctx.store,
      fetchByHash: createFetchByHash(ctx.client, options.requestSignal),
      fetchPage,
      lists: global && !byKey ? listsAfterWalk(global) : undefined,
      byKey: byKey
        ? {
            fetchKeyPage,
            count: ctx.client.keyCount(),
          }
        : undefined,
      // Sized to the budget at the distance measured by the walks (at most LEDGER_CONCURRENCY).
      concurrency: ctx.client.inFlight(),
      maxRecords: options.maxRereads,
      dueBy: startedAt,
      owner,
      signal: options.signal,
      logger: ctx.logger,
    });
    result.reconcile = result.reread;
  }
  result.stopped = options.signal?.aborted === true;
  return result;
}

/** One stream synced in the run's dialect: a first backfill in lanes where it pays, then the walk. */
function syncStream(
  ctx: SyncContext,
  options: SyncOptions,
  stream: {
    spec: StreamSpec;
    owner: string;
    dialect: 'key' | 'page';
    fetchPage: FetchPage;
    fetchKeyPage: FetchKeyPage;
  },
): Promise<WalkResult> {
  const { spec } = stream;
  const common = {
    store: ctx.store,
    spec,
    owner: stream.owner,
    full: options.full,
    settleMs: ctx.config.settleMs,
    signal: options.signal,
    onPage: options.onPage,
    logger: ctx.logger,
    backfills: ctx.backfills,
  };
  if (stream.dialect === 'key')
    return syncByKey({
      ...common,
      fetchKeyPage: stream.fetchKeyPage,
      // A tail begins at its head: the same request re-reads the records waiting there for a
      // status change (of the global list: the re-read after the walks then leaves them alone),
      // and a stretch far below it is read in lanes (a catch-up).
      headFirst: true,
      fetchKeyHead: createFetchKeyHead(ctx.client, options.requestSignal),
      fetchKeyText: createFetchKeyText(ctx.client, options.requestSignal),
      lanes: keyLanes(ctx),
      count: ctx.client.keyCount(),
      rangeWidth: ctx.client.keyCount() * KEY_REQUESTS_PER_RANGE,
    });
  const pagesInFlight = () => pageWindow(ctx.client.inFlight(PAGE_SIZE), ctx.config.concurrency);
  return syncByPage({
    ...common,
    fetchPage: stream.fetchPage,
    concurrency: pagesInFlight,
    maxConcurrency: ctx.config.concurrency,
    // A first backfill of the global list: a range a page in flight, as many as the walk's window.
    lanes: (ctx.config.writers ?? 2) > 1 ? pagesInFlight : undefined,
  });
}

/** The token list when this run refreshes it (`null`: not due); saved by {@link saveTokens}. */
async function readTokens(ctx: SyncContext, options: SyncOptions): Promise<LedgerToken[] | null> {
  if (!ctx.saveTokens || !(await tokensDue(ctx, options.refreshTokens))) return null;
  return (await ctx.client.info({ signal: options.requestSignal })).tokenList;
}

/**
 * Saves the token list read, after the walks: its save corrects the tags of every record stored
 * before it, which a save during the walks could not do for a record whose write was under way.
 */
async function saveTokens(ctx: SyncContext, tokens: LedgerToken[] | null): Promise<number | null> {
  if (tokens === null || !ctx.saveTokens) return null;
  await ctx.saveTokens(tokens);
  ctx.logger.info({ tokens: tokens.length }, 'tokens refreshed');
  return tokens.length;
}

/** Whether this run reads `/info`: asked for, or the stored token list is missing or stale. */
async function tokensDue(ctx: SyncContext, asked: boolean | undefined): Promise<boolean> {
  if (asked !== undefined) return asked;
  const listedAt = ctx.tokensListedAt ? await ctx.tokensListedAt() : null;
  return listedAt === null || Date.now() - listedAt.getTime() >= REFERENCE_REFRESH_MS;
}
