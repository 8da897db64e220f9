/**
 * A first backfill by page number whose ranges are read at once while records arrive: the drift
 * that `RangeStarts` answers, for the tests of the ranges in one process and in Redis.
 */
import assert from 'node:assert/strict';
import { fetchRange, planBackfill, type RangeTask } from '../../src/sync/backfill/page-range.js';
import { type CheckOutcome, checkBackfill } from '../../src/sync/backfill/run-check.js';
import type { RangeStarts } from '../../src/sync/ports/backfill-store.js';
import { MemoryStore } from '../helpers/memory-store.js';
import { LiveList } from './sync-fakes.js';

/** Arrivals of one record every third request: the pages drift slower than a range reads them. */
export function oneEveryThirdRequest(): (list: LiveList) => void {
  let requests = 0;
  return (list) => {
    if (++requests % 3 === 0) list.add(1);
  };
}

/**
 * Plans run `id` over a list of 300 records, five pages a range, then reads every range at once,
 * `arrive` called after each request, each range with the starts `startsOf` gives it (none: it
 * ends at its last page); returns the list, the tasks and the run's first check.
 */
export async function readRangesAtOnce(input: {
  id: string;
  arrive: (list: LiveList) => void;
  startsOf?: () => RangeStarts | undefined;
}): Promise<{ list: LiveList; tasks: RangeTask[]; outcome: CheckOutcome }> {
  const list = new LiveList({ count: 300 });
  const store = new MemoryStore();
  const backfillId = input.id;
  const plan = await planBackfill({
    store,
    fetchPage: list.fetchPage,
    spec: {},
    id: backfillId,
    pagesPerRange: 5,
  });
  assert.ok(plan);
  list.afterServe = () => input.arrive(list);
  await Promise.all(
    plan.tasks.map((task) =>
      fetchRange({
        store,
        fetchPage: list.fetchPage,
        spec: {},
        backfillId,
        task,
        starts: input.startsOf?.(),
      }),
    ),
  );
  const outcome = await checkBackfill({ store, syncStore: store, spec: {}, backfillId, round: 0 });
  return { list, tasks: plan.tasks, outcome };
}
