import { randomUUID } from 'node:crypto';
import type { FlowJob } from 'bullmq';
import { PAGE_SIZE } from '../defaults.js';
import { backfillOwner } from '../domain/lease-owner.js';
import type { StreamSpec } from '../domain/stream-key.js';
import { streamKey } from '../domain/stream-key.js';
import { pendingKeyTasks, planKeyBackfill, taperKeyTasks } from '../sync/backfill/key-backfill.js';
import type { RangeTask } from '../sync/backfill/page-range.js';
import { planBackfill } from '../sync/backfill/page-range.js';
import type { KeyRangeTask } from '../sync/key-source.js';
import type { BackfillRun } from '../sync/ports/backfill-store.js';
import { indexesPayToDefer } from '../sync/ports/read-indexes.js';
import { openStreamSession, type StreamSession } from '../sync/stream-session.js';
import type { WalkResult } from '../sync/walk/walk-types.js';
import type { BackfillCheckJob, BackfillRangeJob } from './jobs.js';
import { QUEUE_NAMES } from './jobs.js';
import { DEFAULT_JOB_OPTIONS } from './queues.js';
import type { WorkerDeps } from './worker-deps.js';

/**
 * Enqueues one round of a parallel backfill as a BullMQ flow: the range jobs as children, the
 * completeness check as their parent, run once every child has finished. A child that fails for
 * good does not block the check: its pages simply stay unproven and the check repairs them.
 */
export async function enqueueBackfillRound(
  deps: Pick<WorkerDeps, 'queues'>,
  input: {
    stream: StreamSpec;
    backfillId: string;
    round: number;
    tasks: ReadonlyArray<RangeTask | KeyRangeTask>;
    revival?: string;
  },
): Promise<void> {
  const children: FlowJob[] = input.tasks.map((task, i) => ({
    name: 'backfill-range',
    queueName: QUEUE_NAMES.backfill,
    data: { stream: input.stream, backfillId: input.backfillId, ...task } satisfies BackfillRangeJob,
    opts: {
      ...DEFAULT_JOB_OPTIONS,
      jobId: `range-${input.backfillId}-${input.round}-${i}`,
      ignoreDependencyOnFailure: true,
    },
  }));
  const check: BackfillCheckJob = { stream: input.stream, backfillId: input.backfillId, round: input.round };
  await deps.queues.flows.add({
    name: 'backfill-check',
    queueName: QUEUE_NAMES.backfill,
    data: check,
    opts: {
      ...DEFAULT_JOB_OPTIONS,
      jobId: `check-${input.backfillId}-${input.round}${input.revival ? `-${input.revival}` : ''}`,
    },
    children,
  });
}

/**
 * Starts a parallel backfill of `stream` when it has never been synced and none is running.
 * Returns what it did; `null` means the stream is past its backfill and should be tailed.
 * The backfill takes the stream's lease first and holds it until its last check (see
 * `backfillOwner`); `LeaseLostError` when another runner holds it.
 */
export async function startBackfillIfNeeded(
  deps: Pick<
    WorkerDeps,
    | 'queues'
    | 'backfillStore'
    | 'syncStore'
    | 'fetchPage'
    | 'fetchKeyHead'
    | 'keyCount'
    | 'pagesPerRange'
    | 'leaseMs'
    | 'indexes'
    | 'logger'
  >,
  stream: StreamSpec,
  dialect: 'key' | 'page' = 'page',
): Promise<{ backfill: string; state: 'started' | 'running' | 'revived'; ranges: number } | null> {
  const running = await deps.backfillStore.runningRun(streamKey(stream));
  if (running) {
    const revived = await reviveLostRound(deps, stream, running);
    return { backfill: running.id, state: revived ? 'revived' : 'running', ranges: 0 };
  }
  if (await deps.backfillStore.streamStarted(streamKey(stream))) return null;
  return startRunUnderLease(deps, stream, async (id, state) => {
    // Synced by another runner since the look above: tail it instead.
    if (state.watermark !== null || state.walk !== null) return null;
    // Into an empty mirror, the read-side indexes are built when the check proves the backfill.
    await deferIndexes(deps, dialect);
    return dialect === 'key'
      ? planKeyJobs(deps, stream, id)
      : planBackfill({
          store: deps.backfillStore,
          fetchPage: deps.fetchPage,
          spec: stream,
          id,
          pagesPerRange: deps.pagesPerRange,
        });
  });
}

/**
 * Takes the stream's lease for a new run (`backfillOwner`), plans the run and enqueues its first
 * round. The lease stays held: the run's range commits renew it, and its last check releases it.
 * `null`, the lease released, when `plan` gives no run; a failure releases it too.
 */
async function startRunUnderLease(
  deps: Pick<WorkerDeps, 'queues' | 'syncStore' | 'leaseMs' | 'logger'>,
  stream: StreamSpec,
  plan: (
    id: string,
    state: StreamSession['state'],
  ) => Promise<{ run: BackfillRun; tasks: ReadonlyArray<RangeTask | KeyRangeTask> } | null>,
): Promise<{ backfill: string; state: 'started'; ranges: number } | null> {
  const id = randomUUID();
  const session = await openStreamSession({
    store: deps.syncStore,
    spec: stream,
    owner: backfillOwner(id),
    leaseMs: deps.leaseMs,
    logger: deps.logger,
  });
  try {
    const planned = await plan(id, session.state);
    if (!planned) {
      await session.end({ finished: true });
      return null;
    }
    await enqueueBackfillRound(deps, { stream, backfillId: planned.run.id, round: 0, tasks: planned.tasks });
    return { backfill: planned.run.id, state: 'started', ranges: planned.tasks.length };
  } catch (error) {
    await session.end({ error });
    throw error;
  }
}

/**
 * A running backfill whose jobs Redis no longer holds (it restarted without persistence, or was
 * flushed) would wait forever: its proofs live in Postgres, so a fresh check round with no
 * children picks it up, finds what is still unproven and repairs it.
 */
async function reviveLostRound(
  deps: Pick<WorkerDeps, 'queues'>,
  stream: StreamSpec,
  run: BackfillRun,
): Promise<boolean> {
  for (const round of [run.round, run.round + 1]) {
    const job = await deps.queues.backfill.getJob(`check-${run.id}-${round}`);
    if (!job) continue;
    const state = await job.getState();
    if (state !== 'completed' && state !== 'failed' && state !== 'unknown') return false;
  }
  const revived = await deps.queues.backfill.getJobs([
    'waiting',
    'active',
    'delayed',
    'waiting-children',
    'prioritized',
  ]);
  if (revived.some((job) => job.name === 'backfill-check' && job.data?.backfillId === run.id)) return false;
  await enqueueBackfillRound(deps, {
    stream,
    backfillId: run.id,
    round: run.round + 1,
    tasks: [],
    revival: `${Date.now()}`,
  });
  return true;
}

/**
 * A tail by key far behind its head, handed over by its walk (`behind`): a catch-up run from the
 * stream's settled mark to that head, enqueued as range jobs as a first backfill by key is (the
 * last ones narrower), the stream's lease held until its last check. `null` when another run is
 * going: its jobs read the stream.
 */
export async function startCatchUp(
  deps: Pick<
    WorkerDeps,
    'queues' | 'backfillStore' | 'syncStore' | 'keyCount' | 'pagesPerRange' | 'leaseMs' | 'logger'
  >,
  stream: StreamSpec,
  behind: NonNullable<WalkResult['behind']>,
): Promise<{ backfill: string; state: 'started'; ranges: number } | null> {
  return startRunUnderLease(deps, stream, async (id) => {
    const { head, from, gapFloor } = behind;
    const run = await deps.backfillStore.startRun({
      id,
      key: streamKey(stream),
      headRawId: head,
      totalPages: 0,
      floor: from,
      gapFloor,
    });
    if (!run) return null;
    const width = keyRangeWidth(deps);
    const tasks = taperKeyTasks(
      await pendingKeyTasks(deps.backfillStore, run, width),
      width,
      deps.keyCount(),
    );
    deps.logger.info(
      { stream: run.key, backfill: run.id, head, floor: from, ranges: tasks.length },
      'catch-up by key as range jobs',
    );
    return { run, tasks };
  });
}

/** A first backfill by key as range jobs, the last ones narrower (`taperKeyTasks`). */
async function planKeyJobs(
  deps: Pick<WorkerDeps, 'backfillStore' | 'fetchKeyHead' | 'keyCount' | 'pagesPerRange'>,
  stream: StreamSpec,
  id: string,
): Promise<{ run: BackfillRun; tasks: KeyRangeTask[] } | null> {
  const width = keyRangeWidth(deps);
  const plan = await planKeyBackfill({
    store: deps.backfillStore,
    fetchKeyHead: deps.fetchKeyHead,
    spec: stream,
    id,
    width,
  });
  return plan && { run: plan.run, tasks: taperKeyTasks(plan.tasks, width, deps.keyCount()) };
}

/**
 * RawIds a range job by key: as many full answers, at the count the service accepts, as a range
 * job by page number reads pages (`--pages-per-range`).
 */
export function keyRangeWidth(deps: Pick<WorkerDeps, 'keyCount' | 'pagesPerRange'>): number {
  return deps.keyCount() * deps.pagesPerRange;
}

/**
 * Defers the read-side indexes before a first backfill into an empty mirror, where its writes, not
 * the request budget, bound it (`indexesPayToDefer`).
 */
export async function deferIndexes(
  deps: Pick<WorkerDeps, 'indexes' | 'requestsPerSecond' | 'keyCount'>,
  dialect: 'key' | 'page',
): Promise<void> {
  const perRequest = dialect === 'key' ? deps.keyCount() : PAGE_SIZE;
  if (indexesPayToDefer(deps.requestsPerSecond, perRequest)) await deps.indexes?.defer();
}
