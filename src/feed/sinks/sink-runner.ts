/**
 * Runs one sink: takes its lease, reads the feed from its stored position, delivers the events its
 * filter lets through in bounded batches, and stores the new position only once the target has
 * acknowledged a batch: at least once, resumed from the stored position after any stop or crash.
 * A batch the target keeps failing is retried with backoff, then dead-lettered and passed, so one
 * bad batch cannot stop the sink for good (docs/design.md, "The change feed", "Sinks").
 */
import { setTimeout as sleep } from 'node:timers/promises';
import pRetry from 'p-retry';
import type { Database } from '../../db/connect.js';
import { deadLetterAndAdvance } from '../../db/queries/sink-dead-letters.js';
import {
  acquireSinkLease,
  advanceSink,
  recordSinkError,
  releaseSinkLease,
  renewSinkLease,
} from '../../db/queries/sink-positions.js';
import { leaseOwnerName } from '../../domain/lease-owner.js';
import type { Logger } from '../../logger.js';
import type { FeedEvent, FeedFilter } from '../feed-event.js';
import type { FeedPage } from '../feed-store.js';
import {
  type BatchBounds,
  batchBody,
  batchesOf,
  DEFAULT_BATCH_BOUNDS,
  retryDelayMs,
  type SinkBatch,
  type SinkRetryPolicy,
} from './sink-batches.js';
import { SinkDeliveryError, type SinkTarget } from './sink-target.js';

/** The feed as a sink reads it: the process's feed hub (`FeedHub`) has both. */
export interface SinkFeed {
  readPage(after: number, limit: number): Promise<FeedPage>;
  /** Resolves once the feed's head passes `after`, after `ms`, or when `signal` aborts. */
  waitBeyond(after: number, ms: number, signal: AbortSignal): Promise<void>;
}

/** Options of {@link startSinkRunner}. */
export interface SinkRunnerOptions {
  /** The sink's name: its row in `feed_sinks`. */
  name: string;
  target: SinkTarget;
  filter: FeedFilter;
  /** Where the lease, the position and the dead letters are written. */
  database: Database;
  /** The feed, once it can be read (a hub that failed to start rejects, and is asked again later). */
  feed: () => Promise<SinkFeed>;
  logger: Logger;
  retry: SinkRetryPolicy;
  /** How long a lease lasts unrenewed: a crashed runner's sink waits this long for another. */
  leaseMs: number;
  /** Default {@link DEFAULT_BATCH_BOUNDS}. */
  bounds?: BatchBounds | undefined;
  /** Default a new `sink:<host>:<pid>:<random>`. */
  owner?: string | undefined;
}

/** A running sink. */
export interface SinkRunner {
  /** Its lease owner name. */
  readonly owner: string;
  /** Stops: no more tries, a delivery in flight is cut (and sent again by the next run), the lease let go. */
  close(): Promise<void>;
}

/** Events read from the feed at a time (cut into batches after filtering). */
export const PAGE_EVENTS = 500;
/** The longest wait for new events before looking again anyway. */
export const IDLE_WAIT_MS = 10_000;
/** The pause after an unexpected failure (the database, the feed, a target's bug) before starting again. */
export const FAILURE_PAUSE_MS = 2000;

interface RunnerContext extends SinkRunnerOptions {
  owner: string;
  bounds: BatchBounds;
  log: Logger;
  /** Aborted by `close()`. */
  stopped: AbortSignal;
}

/** Starts delivering the sink in the background; `close()` stops it. */
export function startSinkRunner(options: SinkRunnerOptions): SinkRunner {
  const stop = new AbortController();
  const ctx: RunnerContext = {
    ...options,
    owner: options.owner ?? leaseOwnerName('sink'),
    bounds: options.bounds ?? DEFAULT_BATCH_BOUNDS,
    log: options.logger.child({ sink: options.name }),
    stopped: stop.signal,
  };
  const running = runSink(ctx);
  return {
    owner: ctx.owner,
    async close() {
      stop.abort();
      await ctx.target
        .close()
        .catch((error: unknown) => ctx.log.warn({ err: error }, 'sink: closing failed'));
      await running;
      await releaseSinkLease(ctx.database.db, { name: ctx.name, owner: ctx.owner }).catch((error: unknown) =>
        ctx.log.warn({ err: error }, 'sink: cannot let go of its lease (it expires by itself)'),
      );
    },
  };
}

/** Takes the lease whenever it is free and delivers while holding it, until stopped. */
async function runSink(ctx: RunnerContext): Promise<void> {
  const { database, name, owner } = ctx;
  while (!ctx.stopped.aborted) {
    try {
      const position = await acquireSinkLease(database.db, {
        name,
        kind: ctx.target.kind,
        filter: filterRecord(ctx.filter),
        owner,
        leaseMs: ctx.leaseMs,
      });
      if (position === null) {
        await pause(ctx.leaseMs / 2, ctx.stopped);
        continue;
      }
      ctx.log.info({ position, owner }, 'sink: delivering');
      await deliverWhileHeld(ctx, position);
    } catch (error) {
      if (ctx.stopped.aborted) break;
      ctx.log.warn({ err: error }, 'sink: stopped by a failure, starting again');
      await pause(FAILURE_PAUSE_MS, ctx.stopped);
    }
  }
}

/** Reads and delivers from `start` on, until stopped or the lease is lost. */
async function deliverWhileHeld(ctx: RunnerContext, start: number): Promise<void> {
  const held = holdLease(ctx);
  let position = start;
  try {
    while (!held.signal.aborted) {
      const feed = await ctx.feed();
      const page = await feed.readPage(position, PAGE_EVENTS);
      if (page.kind === 'gone') {
        if (!(await skipExpired(ctx, position, page.horizon))) return;
        position = page.horizon;
        continue;
      }
      if (page.events.length === 0) {
        await feed.waitBeyond(position, IDLE_WAIT_MS, held.signal);
        continue;
      }
      for (const batch of batchesOf(page, { filter: ctx.filter, bounds: ctx.bounds, sink: ctx.name })) {
        if (held.signal.aborted || !(await deliverBatch(ctx, batch, held.signal))) return;
        position = batch.through;
      }
    }
  } catch (error) {
    // Stopped, or the lease passed to another runner: what was in flight is theirs to deliver.
    if (held.signal.aborted) return;
    throw error;
  } finally {
    held.release();
  }
}

/**
 * Delivers a batch (an empty one only moves the position) and stores where the sink stands: after
 * it, or after its dead letter. False when the lease is no longer this runner's.
 */
async function deliverBatch(ctx: RunnerContext, batch: SinkBatch, signal: AbortSignal): Promise<boolean> {
  const { database, name, owner } = ctx;
  const { events, through } = batch;
  if (events.length > 0) {
    const outcome = await deliverWithRetries(ctx, events, signal);
    if (!outcome.delivered) {
      const first = events[0]?.position ?? through;
      ctx.log.error(
        { first, last: through, events: events.length, attempts: outcome.attempts, reason: outcome.reason },
        'sink: batch dead-lettered',
      );
      const letter = {
        firstPosition: first,
        lastPosition: through,
        events: events.length,
        body: batchBody(name, events),
        reason: outcome.reason,
        attempts: outcome.attempts,
      };
      return deadLetterAndAdvance(database.db, { name, owner, position: through, letter });
    }
  }
  return advanceSink(database.db, { name, owner, position: through, delivered: events.length });
}

type Outcome = { delivered: true } | { delivered: false; reason: string; attempts: number };

/**
 * Tries the batch up to `tries` times while the target's failures are retryable, waiting with
 * backoff (or as long as the far side asked) in between. A failure of another kind than
 * {@link SinkDeliveryError} (a bug, not an answer) is thrown: the batch is not dead-lettered for it.
 */
async function deliverWithRetries(
  ctx: RunnerContext,
  events: readonly FeedEvent[],
  signal: AbortSignal,
): Promise<Outcome> {
  const { retry, log } = ctx;
  let attempts = 0;
  const span = { first: events[0]?.position, last: events.at(-1)?.position, events: events.length };
  try {
    await pRetry(
      async () => {
        attempts += 1;
        await ctx.target.deliver(events);
      },
      {
        retries: retry.tries - 1,
        // The waits are ours (in shouldRetry), so a Retry-After replaces the backoff rather than adds to it.
        minTimeout: 0,
        signal,
        onFailedAttempt: async ({ error }) => {
          // A delivery cut by a stop is no failure of the far side.
          if (signal.aborted) return;
          await recordSinkError(ctx.database.db, { name: ctx.name, owner: ctx.owner, error: error.message });
        },
        shouldRetry: async ({ error, attemptNumber }) => {
          if (!(error instanceof SinkDeliveryError && error.retryable)) return false;
          const delayMs = retryDelayMs(attemptNumber - 1, retry, { retryAfterMs: error.retryAfterMs });
          log.warn(
            { ...span, attempt: attemptNumber, delay_ms: delayMs, error: error.message },
            'sink: delivery failed, retrying',
          );
          await sleep(delayMs, undefined, { signal });
          return true;
        },
      },
    );
    return { delivered: true };
  } catch (error) {
    if (signal.aborted || !(error instanceof SinkDeliveryError)) throw error;
    return { delivered: false, reason: error.message, attempts };
  }
}

/**
 * The sink stood below the retention's horizon: the events after it were deleted before it
 * delivered them. It records the stretch skipped as a dead letter and goes on from the horizon
 * (as a Kafka consumer resets to the earliest offset kept), rather than stop until someone moves
 * it by hand: stopping would bring nothing back and let it fall further behind.
 */
async function skipExpired(ctx: RunnerContext, position: number, horizon: number): Promise<boolean> {
  const reason = `positions ${position + 1} to ${horizon} expired before they were delivered (LEDGER_FEED_RETENTION)`;
  ctx.log.error({ first: position + 1, last: horizon }, `sink: ${reason}`);
  const letter = {
    firstPosition: position + 1,
    lastPosition: horizon,
    events: null,
    body: null,
    reason,
    attempts: 0,
  };
  return deadLetterAndAdvance(ctx.database.db, {
    name: ctx.name,
    owner: ctx.owner,
    position: horizon,
    letter,
  });
}

/**
 * Renews the lease every third of its length while held. The signal aborts when the runner
 * stops or a renewal fails: another runner may then hold the sink, and this one stops delivering.
 */
function holdLease(ctx: RunnerContext): { signal: AbortSignal; release(): void } {
  const lost = new AbortController();
  const onStop = () => lost.abort();
  ctx.stopped.addEventListener('abort', onStop, { once: true });
  let renewing = false;
  const timer = setInterval(async () => {
    if (renewing || lost.signal.aborted) return;
    renewing = true;
    try {
      const { name, owner, leaseMs } = ctx;
      if (!(await renewSinkLease(ctx.database.db, { name, owner, leaseMs }))) {
        ctx.log.warn({ owner }, 'sink: its lease passed to another runner');
        lost.abort();
      }
    } catch (error) {
      ctx.log.warn({ err: error }, 'sink: cannot renew its lease; stopping until it can take it again');
      lost.abort();
    } finally {
      renewing = false;
    }
  }, ctx.leaseMs / 3);
  return {
    signal: lost.signal,
    release() {
      clearInterval(timer);
      ctx.stopped.removeEventListener('abort', onStop);
    },
  };
}

/** Waits `ms`, or less when `signal` aborts (never throws). */
async function pause(ms: number, signal: AbortSignal): Promise<void> {
  await sleep(ms, undefined, { signal }).catch(() => undefined);
}

/** The filter as stored: only the fields set. */
function filterRecord(filter: FeedFilter): Record<string, string> {
  return Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== undefined));
}
