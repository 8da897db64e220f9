import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { runMain } from '../helpers/run-main.js';

const run = runMain;

describe('verify', () => {
  let db: TestDatabase;
  let sim: Simulator;
  let env: Record<string, string>;

  before(async () => {
    db = await createTestDatabase();
    sim = createSimulator({ records: 400, seed: 5, holeRate: 0.05 });
    const { url } = await sim.listen();
    env = { DATABASE_URL: db.url, LEDGER_BASE_URL: url, LOG_LEVEL: 'silent' };
  });
  after(async () => {
    await sim.close();
    await db.drop();
  });

  it('reports nothing synced as incomplete', async () => {
    const { code, out } = await run(['verify'], env);
    assert.equal(code, 1);
    assert.match(out, /no stream synced yet/);
  });

  it('after a sync, every stream is complete and the holes in the rawId sequence are proven absent', async () => {
    assert.equal((await run(['sync'], env)).code, 0);
    const { code, out } = await run(['verify', '--json'], env);
    assert.equal(code, 0, out);
    const report = JSON.parse(out) as {
      complete: boolean;
      streams: Array<{
        stream: string;
        watermark: number;
        unprovenGaps: unknown[];
        holeCount: number;
        tableCount: number;
        serviceCount: { exact: number };
      }>;
    };
    assert.equal(report.complete, true);
    const global = report.streams.find((s) => s.stream === 'txs');
    assert.ok(global);
    assert.equal(global.watermark, sim.headRawId());
    assert.deepEqual(global.unprovenGaps, []);
    assert.equal(global.tableCount, 400);
    assert.equal(global.serviceCount.exact, 400);
    assert.ok(global.holeCount > 0, 'the data set has holes in its rawIds and they are reported');
  });

  it('a record missing from the table makes the report incomplete and names the difference', async () => {
    await db.database.db.execute(
      sql`delete from ledger_transactions where raw_id = (select raw_id from ledger_transactions order by raw_id limit 1 offset 100)`,
    );
    const { code, out } = await run(['verify'], env);
    assert.equal(code, 1);
    assert.match(out, /txs: INCOMPLETE/);
    assert.match(out, /the service lists 400 records at or below the watermark, the table holds 399/);
  });
});
