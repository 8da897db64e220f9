import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import { isEvmAddress } from '../../src/domain/integrity.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { runMain } from '../helpers/run-main.js';

const run = runMain;

/** The simulator's own account of each record: which ones it served tampered, and each sender. */
async function truth(url: string): Promise<Array<{ rawId: number; from: string; tampered: boolean }>> {
  const text = await (await fetch(`${url}/_sim/records`)).text();
  return text
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => JSON.parse(line) as { rawId: number; from: string; tampered?: boolean })
    .map((r) => ({ rawId: r.rawId, from: r.from, tampered: r.tampered === true }));
}

describe('integrity checks of stored records', () => {
  let db: TestDatabase;
  let sim: Simulator;
  let env: Record<string, string>;
  let simUrl: string;

  before(async () => {
    db = await createTestDatabase();
    sim = createSimulator({ records: 300, seed: 11, faults: { tamperedRate: 0.05 } });
    const { url } = await sim.listen();
    simUrl = url;
    env = { DATABASE_URL: db.url, LEDGER_BASE_URL: url, LOG_LEVEL: 'silent' };
  });
  after(async () => {
    await sim.close();
    await db.drop();
  });

  it('stores tampered records flagged, and verify names exactly them and exits 1', async () => {
    const records = await truth(simUrl);
    const tampered = records.filter((r) => r.tampered).map((r) => r.rawId);
    assert.ok(tampered.length > 0, 'the simulator served some records tampered');

    assert.equal((await run(['sync', '--check-signatures'], env)).code, 0);
    const rows = await queryRows<{ raw_id: string; hash_check: string; signature_check: string }>(
      db.database.db,
      sql`SELECT raw_id::text AS raw_id, hash_check, signature_check FROM ledger_transactions t ORDER BY t.raw_id`,
    );
    assert.equal(rows.length, records.length, 'every record is stored, tampered ones included');
    const flagged = rows.filter((r) => r.hash_check === 'mismatch').map((r) => Number(r.raw_id));
    assert.deepEqual(flagged, tampered);
    const evm = new Map(records.map((r) => [r.rawId, isEvmAddress(r.from)]));
    for (const row of rows) {
      const rawId = Number(row.raw_id);
      const expected = !evm.get(rawId) ? 'unknown' : tampered.includes(rawId) ? 'mismatch' : 'ok';
      assert.equal(row.signature_check, expected, `signature of rawId ${rawId}`);
      if (!tampered.includes(rawId)) assert.equal(row.hash_check, 'ok', `hash of rawId ${rawId}`);
    }
    assert.ok(
      rows.some((r) => r.signature_check === 'ok'),
      'some senders are EVM accounts',
    );

    const { code, out } = await run(['verify', '--json'], env);
    assert.equal(code, 1, 'a record not what its sender signed fails verify');
    const report = JSON.parse(out) as {
      complete: boolean;
      integrity: {
        hash: { mismatch: number; ok: number };
        mismatchTotal: number;
        mismatches: Array<{ rawId: number }>;
      };
    };
    assert.equal(report.complete, false);
    assert.equal(report.integrity.hash.mismatch, tampered.length);
    assert.equal(report.integrity.hash.ok, records.length - tampered.length);
    assert.equal(report.integrity.mismatchTotal, tampered.length);
    assert.deepEqual(
      report.integrity.mismatches.map((m) => m.rawId),
      tampered.slice(0, 50),
    );
    const text = await run(['verify'], env);
    assert.match(
      text.out,
      new RegExp(`integrity: ${tampered.length} record\\(s\\) not what their sender signed`),
    );
    assert.match(
      text.out,
      new RegExp(`rawId ${tampered[0]} \\(0x[0-9a-f]+\\): hash( and signature)? mismatch`),
    );
  });

  it('keeps a signature outcome when a later sync does not check signatures', async () => {
    // Make every record look changed to the next sync, so each row is written again.
    await db.database.db.execute(sql`UPDATE ledger_transactions SET express_err = 'stale'`);
    assert.equal((await run(['sync', '--full'], env)).code, 0);
    const [row] = await queryRows<{ unchecked: string; rewritten: string }>(
      db.database.db,
      sql`SELECT count(*) FILTER (WHERE signature_check IS NULL)::text AS unchecked,
                 count(*) FILTER (WHERE express_err = 'stale')::text AS rewritten
          FROM ledger_transactions`,
    );
    assert.equal(row?.rewritten, '0', 'every row was written again');
    assert.equal(row?.unchecked, '0', 'no signature outcome was lost');
  });

  it('reports a clean mirror with exit 0 and every hash checked', async () => {
    const clean = await createTestDatabase();
    const cleanSim = createSimulator({ records: 120, seed: 12 });
    try {
      const { url } = await cleanSim.listen();
      const cleanEnv = { DATABASE_URL: clean.url, LEDGER_BASE_URL: url, LOG_LEVEL: 'silent' };
      assert.equal((await run(['sync'], cleanEnv)).code, 0);
      const { code, out } = await run(['verify', '--json'], cleanEnv);
      assert.equal(code, 0, out);
      const report = JSON.parse(out) as {
        integrity: { hash: { ok: number; mismatch: number }; signature: { unchecked: number } };
      };
      assert.equal(report.integrity.hash.ok, 120);
      assert.equal(report.integrity.hash.mismatch, 0);
      assert.equal(report.integrity.signature.unchecked, 120, 'signatures are not checked by default');
    } finally {
      await cleanSim.close();
      await clean.drop();
    }
  });
});
