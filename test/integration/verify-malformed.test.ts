/**
 * `verify` after a sync of a service that serves some records malformed: those without a
 * readable rawId cannot be keyed, so no mirror can hold them; they are counted exactly, apart,
 * and a mirror that holds everything else passes. A record the mirror lost is still named. By
 * page numbers, where the count reads the pages around them (by key: verify-key.test.ts).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { runMain } from '../helpers/run-main.js';

interface StreamReport {
  stream: string;
  complete: boolean;
  count: {
    listed: number;
    stored: number;
    withoutRawId: number;
    extra: number;
    missing: { count: number; rawIds: number[] };
  };
  rejected: { setAside: number; unkeyableKept: number };
  missing: { count: number; rawIds: number[] };
  problems: string[];
}

describe('verify with malformed records served', () => {
  let db: TestDatabase;
  let sim: Simulator;
  let env: Record<string, string>;
  const truth = { withoutRawId: 0, setAside: 0, readable: [] as number[] };

  const verify = async (...args: string[]) => {
    const result = await runMain(['verify', '--json', ...args], env);
    const report = JSON.parse(result.out) as { complete: boolean; streams: StreamReport[] };
    return { code: result.code, global: report.streams.find((s) => s.stream === 'txs')! };
  };
  const addsUp = (s: StreamReport) =>
    assert.equal(
      s.count.listed,
      s.count.stored + s.count.withoutRawId + s.count.missing.count - s.count.extra,
      JSON.stringify(s.count),
    );

  before(async () => {
    db = await createTestDatabase();
    // The case: 3,000 records (300 pages, beyond the default walk limit), 5% malformed.
    sim = createSimulator({ records: 3000, seed: 51, arrivalsPerSecond: 0, faults: { malformedRate: 0.05 } });
    env = {
      DATABASE_URL: db.url,
      LEDGER_BASE_URL: (await sim.listen()).url,
      LOG_LEVEL: 'silent',
      LEDGER_PAGING: 'page',
    };
    for (const record of sim.records()) {
      if (record.malformed === 'missing_raw_id') truth.withoutRawId += 1;
      else if (record.malformed !== undefined) truth.setAside += 1;
      else truth.readable.push(record.rawId);
    }
    assert.ok(truth.withoutRawId > 20 && truth.setAside > 20, JSON.stringify(truth).slice(0, 200));
    assert.equal((await runMain(['sync'], env)).code, 0);
  });
  after(async () => {
    await sim.close();
    await db.drop();
  });

  it('a mirror holding everything served readably is complete; the unkeyable records counted exactly', async () => {
    const { code, global } = await verify();
    assert.equal(code, 0, JSON.stringify(global.problems));
    assert.equal(global.complete, true);
    assert.equal(global.count.listed, 3000);
    assert.equal(global.count.withoutRawId, truth.withoutRawId);
    assert.equal(global.count.stored, 3000 - truth.withoutRawId);
    assert.deepEqual(global.count.missing, { count: 0, rawIds: [] });
    assert.deepEqual(global.rejected, { setAside: truth.setAside, unkeyableKept: truth.withoutRawId });
    addsUp(global);

    const text = await runMain(['verify'], env);
    assert.equal(text.code, 0, text.out);
    assert.match(text.out, /^txs: complete$/m);
    assert.ok(
      text.out.includes(
        `at or below the watermark: service 3000 = table ${3000 - truth.withoutRawId} ` +
          `(${truth.readable.length} stored, ${truth.setAside} set aside in rejected_records with a reason) + ` +
          `${truth.withoutRawId} served without a readable rawId (cannot be keyed; rejected_records keeps ${truth.withoutRawId} such) + 0 missing`,
      ),
      text.out,
    );
  });

  it('the same when the list is also walked record by record', async () => {
    const { code, global } = await verify('--walk-limit', '400');
    assert.equal(code, 0, JSON.stringify(global.problems));
    assert.equal(global.count.withoutRawId, truth.withoutRawId);
    addsUp(global);
  });

  it('records lost from the table, stored or set aside, are still named by rawId', async () => {
    const stored = truth.readable[Math.floor(truth.readable.length / 2)]!;
    const [setAside] = await queryRows<{ raw_id: string }>(
      db.database.db,
      sql`DELETE FROM rejected_records
          WHERE fingerprint = (SELECT fingerprint FROM rejected_records WHERE raw_id IS NOT NULL
                               ORDER BY raw_id LIMIT 1 OFFSET 30)
          RETURNING raw_id::text`,
    );
    await db.database.db.execute(sql`DELETE FROM ledger_transactions WHERE raw_id = ${stored}`);
    const lost = [stored, Number(setAside!.raw_id)].sort((a, b) => a - b);

    const { code, global } = await verify();
    assert.equal(code, 1);
    assert.equal(global.complete, false);
    assert.deepEqual(global.missing, { count: 2, rawIds: lost });
    assert.equal(global.count.withoutRawId, truth.withoutRawId, 'still counted apart');
    addsUp(global);
    assert.match(
      global.problems.join('\n'),
      new RegExp(
        `2 record\\(s\\) the service lists at or below the watermark are missing from the table \\(rawIds ${lost.join(', ')}\\)`,
      ),
    );

    // A full walk stores them again.
    assert.equal((await runMain(['sync', '--full'], env)).code, 0);
    assert.equal((await verify()).code, 0);
  });
});
