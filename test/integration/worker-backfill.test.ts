import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import { DEFERRABLE_INDEXES } from '../../src/db/schema/deferred-indexes.js';
import { provenCount, type Setup, setUp, syncToTruth } from '../helpers/redis.js';

describe('workers backfill in parallel', () => {
  let setup: Setup | undefined;
  after(async () => {
    await setup?.close();
  });

  it('three worker processes mirror a growing list exactly, with the proof of completeness recorded', async () => {
    setup = await setUp('worker-backfill', { records: 1200, arrivalsPerSecond: 20, seed: 11 });
    await Promise.all([setup.start(), setup.start(), setup.start()].map((w) => w.ready));
    await syncToTruth(setup, 40_000);
    assert.ok((await provenCount(setup.db)) > 0);
    // The range jobs shared where they began (`RangeStarts`), one entry per range that began a page.
    const [run] = await queryRows<{ id: string }>(setup.db.database.db, sql`SELECT id FROM backfill_runs`);
    assert.ok(run);
    assert.ok(
      (await setup.redis.hlen(`${setup.prefix}:range-starts:${run.id}`)) > 0,
      'range starts shared in Redis',
    );
    // The read-side indexes were dropped for the backfill and built once it was proven.
    const logs = setup.workers.map((w) => w.log()).join('');
    assert.match(logs, /read-side indexes deferred to the end of the first backfill/);
    assert.match(logs, /deferred indexes built/);
    const present = await queryRows<{ name: string }>(
      setup.db.database.db,
      sql`SELECT indexname AS name FROM pg_indexes WHERE tablename IN ('ledger_transactions', 'ledger_bundle_items')`,
    );
    for (const name of DEFERRABLE_INDEXES)
      assert.ok(
        present.some((p) => p.name === name),
        `${name} is built`,
      );
    const left = await queryRows(setup.db.database.db, sql`SELECT name FROM deferred_indexes`);
    assert.equal(left.length, 0);
    await setup.close();
    setup = undefined;
  });
});
