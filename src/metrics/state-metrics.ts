import { Gauge, type Registry } from 'prom-client';
import { METRIC_PREFIX } from './names.js';

/** One stream's state as the database holds it, for the gauges. */
export interface StreamGaugeValues {
  stream: string;
  watermark: number | null;
  /** RawIds the stream is behind: the service's head as last seen minus the watermark (0 before any sighting). */
  lagRawIds: number;
  /** Seconds since the service's head was last seen (the age of `lagRawIds`); `null` before any sighting. */
  headAgeSeconds: number | null;
  /** Age of the newest record at or below the watermark; `null` without a watermark. */
  lagSeconds: number | null;
  lastSuccessAt: Date | null;
  errorStreak: number;
  /** 0 to 1; 1 once backfilled. */
  backfillProgress: number;
  nonFinal: number;
  rejected: number;
  conflicts: number;
  /** Backfilled and its last completeness check holds (what `/ready` asks of every stream). */
  complete: boolean;
}

/** The database's state at a scrape. */
export interface StateSnapshot {
  streams: StreamGaugeValues[];
  records: number;
  nonFinalQueued: number;
  nonFinalDue: number;
  rejected: number;
  conflicts: number;
  /** Read-side indexes a first backfill dropped and has not built yet. */
  deferredIndexes: number;
}

/** The change feed's standing as stored: what is waiting for a stamp, and each sink's position. */
export interface FeedGaugeValues {
  unstamped: number;
  sinks: ReadonlyArray<{
    name: string;
    position: number;
    lagPositions: number;
    lagSeconds: number;
    deliveredEvents: number;
    deadLetters: number;
  }>;
}

/** Depth of one BullMQ queue. */
export interface QueueGaugeValues {
  queue: string;
  waiting: number;
  delayed: number;
  active: number;
  failed: number;
}

/**
 * Sets the state gauges from a snapshot; `null` when it could not be read: then `database_up` is
 * 0 and every series read from the database goes away (no zeros that look like an empty mirror).
 */
export interface StateMetrics {
  setDatabase(snapshot: StateSnapshot | null): void;
  setQueues(queues: readonly QueueGaugeValues[] | null): void;
  /** The feed's gauges; `null` when they could not be read (then none is shown). */
  setFeed(feed: FeedGaugeValues | null): void;
}

const SINK_GAUGES = {
  position: [
    'sink_position',
    'The last change-feed position the sink delivered (or passed as a dead letter).',
  ],
  lagPositions: ['sink_lag_positions', "Positions between the sink's and the feed's head."],
  lagSeconds: [
    'sink_lag_seconds',
    'How long ago the oldest event the sink has not delivered yet was stamped; 0 at the head.',
  ],
  deliveredEvents: ['sink_delivered_events', 'Events the sink delivered, since it was first started.'],
  deadLetters: ['sink_dead_letters', 'Batches the sink gave up on and kept as dead letters.'],
} as const;

const STREAM_GAUGES = {
  watermark: ['stream_watermark_raw_id', 'Every record of the stream up to this rawId is stored.'],
  lagRawIds: [
    'stream_lag_raw_ids',
    "RawIds the stream is behind the service: the newest rawId last seen on the stream's page 1 (by a walk, or by the head probe when LEDGER_BASE_URL is set) minus the watermark.",
  ],
  headAge: [
    'stream_head_age_seconds',
    "Seconds since the service's head of the stream was last seen: how old stream_lag_raw_ids' knowledge is.",
  ],
  lagSeconds: [
    'stream_lag_seconds',
    'Age of the newest record at or below the watermark (its ledger time, else its first sight); grows when the ledger is quiet too.',
  ],
  lastSuccess: [
    'stream_last_success_timestamp_seconds',
    'When a run of the stream last ended well (Unix time).',
  ],
  errorStreak: ['stream_error_streak', 'Runs of the stream that failed in a row.'],
  progress: ['stream_backfill_progress_ratio', 'Share of the backfill done, 0 to 1 (1 once backfilled).'],
  nonFinal: ['stream_non_final_records', 'Records of the stream waiting for a re-read (not final yet).'],
  rejected: ['stream_rejected_records', 'Records of the stream that could not be stored (rejected_records).'],
  conflicts: [
    'stream_conflicts',
    'Records of the stream served again with immutable fields different from the stored ones.',
  ],
  complete: [
    'stream_complete',
    '1 when the stream is backfilled and its last completeness check holds (as /ready judges), else 0.',
  ],
} as const;

/** A gauge in no registry yet, with its full name. */
function detached(name: string, help: string): { name: string; gauge: Gauge } {
  const full = `${METRIC_PREFIX}${name}`;
  return { name: full, gauge: new Gauge({ name: full, help, registers: [] }) };
}

/**
 * Gauges read from PostgreSQL at each scrape: the same values from any worker and from `serve`,
 * so they carry no process label (take `max without (instance)` over several targets).
 */
export function registerStateMetrics(registry: Registry): StateMetrics {
  const registers = [registry];
  const gauge = (name: string, help: string, labelNames: string[] = []) =>
    new Gauge({ name: `${METRIC_PREFIX}${name}`, help, labelNames, registers });
  const up = gauge('database_up', '1 when the last scrape could read the database, else 0.');
  const stream = Object.fromEntries(
    Object.entries(STREAM_GAUGES).map(([key, [name, help]]) => [key, gauge(name, help, ['stream'])]),
  ) as Record<keyof typeof STREAM_GAUGES, Gauge>;
  // Unlabelled gauges always show a value (0 after a reset): these join the registry only while
  // the database could be read, so a failed read shows no value rather than an empty mirror.
  const totals = {
    records: detached('records_stored', 'Records stored in ledger_transactions.'),
    nonFinal: detached('non_final_records', 'Records waiting for a re-read (not final yet), all streams.'),
    nonFinalDue: detached('non_final_due_records', 'Of the records waiting for a re-read, those due now.'),
    rejected: detached('rejected_records', 'Distinct records that could not be stored, all streams.'),
    conflicts: detached(
      'conflicts',
      'Record versions served with immutable fields different from the stored ones.',
    ),
    deferredIndexes: detached(
      'deferred_indexes',
      'Read-side indexes dropped for a first backfill and not built yet (reports run slower meanwhile).',
    ),
  };
  const queueJobs = gauge('queue_jobs', 'BullMQ jobs by queue and state (on worker).', ['queue', 'state']);
  const sink = Object.fromEntries(
    Object.entries(SINK_GAUGES).map(([key, [name, help]]) => [key, gauge(name, help, ['sink'])]),
  ) as Record<keyof typeof SINK_GAUGES, Gauge>;
  const unstamped = gauge(
    'feed_unstamped_transactions',
    'Committed transactions whose events have no feed position yet: they wait for a process that serves the feed (or the end of a sync).',
  );
  const showTotals = (shown: boolean): void => {
    for (const { name, gauge: g } of Object.values(totals)) {
      const present = registry.getSingleMetric(name) !== undefined;
      if (shown && !present) registry.registerMetric(g);
      if (!shown && present) registry.removeSingleMetric(name);
    }
  };
  return {
    setDatabase(snapshot) {
      for (const g of Object.values(stream)) g.reset();
      up.set(snapshot === null ? 0 : 1);
      showTotals(snapshot !== null);
      if (snapshot === null) return;
      for (const s of snapshot.streams) {
        const l = { stream: s.stream };
        if (s.watermark !== null) stream.watermark.set(l, s.watermark);
        stream.lagRawIds.set(l, s.lagRawIds);
        if (s.headAgeSeconds !== null) stream.headAge.set(l, s.headAgeSeconds);
        if (s.lagSeconds !== null) stream.lagSeconds.set(l, s.lagSeconds);
        if (s.lastSuccessAt !== null) stream.lastSuccess.set(l, s.lastSuccessAt.getTime() / 1000);
        stream.errorStreak.set(l, s.errorStreak);
        stream.progress.set(l, s.backfillProgress);
        stream.nonFinal.set(l, s.nonFinal);
        stream.rejected.set(l, s.rejected);
        stream.conflicts.set(l, s.conflicts);
        stream.complete.set(l, s.complete ? 1 : 0);
      }
      totals.records.gauge.set(snapshot.records);
      totals.nonFinal.gauge.set(snapshot.nonFinalQueued);
      totals.nonFinalDue.gauge.set(snapshot.nonFinalDue);
      totals.rejected.gauge.set(snapshot.rejected);
      totals.conflicts.gauge.set(snapshot.conflicts);
      totals.deferredIndexes.gauge.set(snapshot.deferredIndexes);
    },
    setFeed(feed) {
      for (const g of Object.values(sink)) g.reset();
      unstamped.reset();
      if (feed === null) return;
      unstamped.set(feed.unstamped);
      for (const s of feed.sinks) {
        for (const key of Object.keys(SINK_GAUGES) as Array<keyof typeof SINK_GAUGES>) {
          sink[key].set({ sink: s.name }, s[key]);
        }
      }
    },
    setQueues(queues) {
      queueJobs.reset();
      for (const q of queues ?? []) {
        for (const state of ['waiting', 'delayed', 'active', 'failed'] as const) {
          queueJobs.set({ queue: q.queue, state }, q[state]);
        }
      }
    },
  };
}
