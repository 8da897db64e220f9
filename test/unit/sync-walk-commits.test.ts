import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PageCheckpoint } from '../../src/domain/checkpoints.js';
import { lastPageOf } from '../../src/domain/commit-pages.js';

import type { TxPage } from '../../src/domain/model.js';
import type { PageCommit, SyncStore, WriteCounts } from '../../src/sync/ports/sync-store.js';
import { openStreamSession } from '../../src/sync/stream-session.js';
import { quietLogger } from '../../src/sync/sync-logger.js';
import { type AcceptedPage, createWalkCommits } from '../../src/sync/walk/walk-commits.js';
import type { PageEvent, WalkResult } from '../../src/sync/walk/walk-types.js';
import { makeTx } from './sync-fakes.js';

/** The store as three functions over arrays: commits kept, leases handed out with rising fences. */
function arrayStore() {
  const written: PageCommit[] = [];
  const acquired: number[] = [];
  /** What happened, in order: `commit <first page>`. */
  const log: string[] = [];
  let fence = 0;
  const store: SyncStore = {
    async acquireStream(spec) {
      fence++;
      acquired.push(fence);
      const lease = { key: 'txs', fence, owner: 'o' };
      return {
        lease,
        state: { key: 'txs', spec, watermark: null, walk: null, settle: { settled: null, pending: null } },
      };
    },
    async commitPage(commit) {
      written.push(commit);
      log.push(`commit ${commit.pages[0]?.page}`);
      return {
        inserted: new Set(commit.pages.flatMap((p) => p.records.map((tx) => tx.rawId))).size,
        updated: 0,
        unchanged: 0,
        rejected: commit.rejected.length,
        conflicts: 0,
      };
    },
    releaseStream: async () => {},
    storedGaps: async () => null,
    advanceWatermark: async () => {},
    duePending: async () => [],
    claimDue: async () => [],
    commitReread: async (): Promise<WriteCounts> => ({
      inserted: 0,
      updated: 0,
      unchanged: 0,
      rejected: 0,
      conflicts: 0,
    }),
  };
  return { store, written, acquired, log };
}

function newResult(watermark: number | null): WalkResult {
  const counts = { inserted: 0, updated: 0, unchanged: 0, rejected: 0, conflicts: 0 };
  return {
    key: 'txs',
    mode: 'backfill',
    pages: 0,
    records: 0,
    counts,
    refetched: 0,
    watermark,
    finished: false,
  };
}

function accepted(
  page: number,
  rawIds: number[],
  walk: Partial<PageCheckpoint> = {},
  finished = false,
): AcceptedPage {
  const served: TxPage = {
    currentPage: page,
    totalPages: 5,
    txs: rawIds.map((id) => makeTx(id)),
    rejected: [],
  };
  const checkpoint = { mode: 'backfill' as const, nextPage: page + 1, headRawId: 50, totalPages: 5, ...walk };
  return { page, served, walk: checkpoint, finished };
}

async function walkCommits(options: { watermark?: number | null; leaseMs?: number } = {}) {
  const fake = arrayStore();
  const clock = { ms: 0 };
  const events: PageEvent[] = [];
  const result = newResult(options.watermark ?? null);
  const session = await openStreamSession({
    store: fake.store,
    spec: {},
    owner: 'o',
    leaseMs: options.leaseMs ?? 300,
    logger: quietLogger,
    now: () => clock.ms,
  });
  const walk = createWalkCommits({
    store: fake.store,
    session,
    result,
    onPage: (event: PageEvent) => events.push(event),
    maxPages: 4,
    lingerMs: 100,
    now: () => clock.ms,
  });
  return { ...fake, clock, events, result, commits: walk, session };
}

describe('walk commits', () => {
  it('commits a batch with the checkpoint after its last page, each record once', async () => {
    const {
      commits,
      commits: { pipeline },
      ...fake
    } = await walkCommits();
    pipeline.add(accepted(1, [50, 49, 48]));
    // The list shifted by one record between the two fetches: 48 shows again on page 2.
    pipeline.add(accepted(2, [48, 47, 46]));
    await pipeline.flush();
    assert.equal(fake.written.length, 1);
    const [commit] = fake.written;
    assert.deepEqual(
      commit?.pages.map((p) => ({ page: p.page, rawIds: p.records.map((tx) => tx.rawId) })),
      [
        { page: 1, rawIds: [50, 49, 48] },
        { page: 2, rawIds: [48, 47, 46] },
      ],
      'every sighting with its page: the store sees the repeat',
    );
    assert.deepEqual(commit?.walk, { mode: 'backfill', nextPage: 3, headRawId: 50, totalPages: 5 });
    assert.equal(commit?.watermark, null, 'the watermark moves only when the walk ends');
    assert.equal(commit?.lease.fence, 1);
    assert.equal(fake.result.pages, 2);
    assert.equal(fake.result.records, 6, 'repeats counted as fetched');
    assert.equal(fake.result.counts.inserted, 5);
    assert.deepEqual(fake.events, [
      {
        key: 'txs',
        mode: 'backfill',
        page: 2,
        pages: 2,
        totalPages: 5,
        records: 6,
        counts: { inserted: 5, updated: 0, unchanged: 0, rejected: 0, conflicts: 0 },
      },
    ]);
  });

  it("reports a page's rejected records with that page, the last of its batch", async () => {
    const {
      commits: { pipeline },
      ...fake
    } = await walkCommits();
    const bad = accepted(2, [47]);
    bad.served.rejected = [{ reason: 'amount is not decimal digits', raw: '{"rawId":48}', rawId: 48 }];
    pipeline.add(accepted(1, [50, 49]));
    pipeline.add(bad);
    await pipeline.flush();
    assert.equal(fake.written[0] && lastPageOf(fake.written[0]), 2);
    assert.equal(fake.written[0]?.rejected.length, 1);
    assert.equal(fake.result.counts.rejected, 1);
  });

  it('clears the walk and moves the watermark to the head with the last commit', async () => {
    const {
      commits: { pipeline },
      ...fake
    } = await walkCommits({ watermark: 20 });
    pipeline.add(accepted(5, [3, 2, 1], {}, true));
    await pipeline.flush();
    assert.equal(fake.written[0]?.walk, null);
    assert.equal(fake.written[0]?.watermark, 50);
    assert.equal(fake.result.watermark, 50);
  });

  it('never moves the watermark back', async () => {
    const {
      commits: { pipeline },
      ...fake
    } = await walkCommits({ watermark: 60 });
    pipeline.add(accepted(5, [3, 2, 1], {}, true));
    await pipeline.flush();
    assert.equal(fake.written[0]?.watermark, 60, 'the head seen (50) is below the watermark');
  });

  it('marks a stream that was complete while still empty with watermark -1', async () => {
    const {
      commits: { pipeline },
      ...fake
    } = await walkCommits();
    pipeline.add(accepted(1, [], { headRawId: null }, true));
    await pipeline.flush();
    assert.equal(fake.written[0]?.watermark, -1);
  });

  it('renews the lease once a third of it passed, and fences later commits with the new one', async () => {
    const { commits, session, ...fake } = await walkCommits({ leaseMs: 300 });
    fake.clock.ms = 100;
    await commits.renewLease();
    assert.deepEqual(fake.acquired, [1], 'not due before a third of it');
    fake.clock.ms = 101;
    assert.equal(session.due(), true);
    commits.pipeline.add(accepted(1, [50]));
    await commits.pipeline.submit();
    await commits.renewLease();
    assert.deepEqual(fake.acquired, [1, 2]);
    assert.equal(session.lease().fence, 2);
    assert.equal(session.due(), false, 'the new lease was taken at 101 ms');
    commits.pipeline.add(accepted(2, [49]));
    await commits.pipeline.flush();
    assert.deepEqual(
      fake.written.map((c) => c.lease.fence),
      [1, 2],
    );
  });
});
