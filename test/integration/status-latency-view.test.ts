import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { main } from '../../src/cli/main.js';
import { queryRows } from '../../src/db/rows.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

async function sync(env: Record<string, string>): Promise<void> {
  const code = await main(['sync', '--recheck-after-ms', '0'], {
    env,
    stdout: new PassThrough(),
    stderr: new PassThrough(),
    signal: new AbortController().signal,
  });
  assert.equal(code, 0);
}

describe('ledger_status_latency', () => {
  let db: TestDatabase;
  let sim: Simulator;
  let env: Record<string, string>;

  before(async () => {
    db = await createTestDatabase();
    // Records arrive confirmed and are packaged 400 ms later.
    sim = createSimulator({ records: 50, seed: 41, arrivalsPerSecond: 40, packageDelayMs: 400 });
    const { url } = await sim.listen();
    env = { DATABASE_URL: db.url, LEDGER_BASE_URL: url, LOG_LEVEL: 'silent' };
  });
  after(async () => {
    await sim.close();
    await db.drop();
  });

  it('gives, per day and action, the time from first sight to packaged that the history holds', async () => {
    await sync(env);
    for (let i = 0; i < 6; i++) {
      await new Promise((resolve) => setTimeout(resolve, 250));
      await sync(env);
    }
    await fetch(`${env.LEDGER_BASE_URL}/_sim/arrivals/pause`, { method: 'POST' });
    await new Promise((resolve) => setTimeout(resolve, 600));
    await sync(env);

    // The same figures computed here from the raw history, record by record.
    const history = await queryRows<{ raw_id: string; action: string; status: string; at: string }>(
      db.database.db,
      sql`SELECT h.raw_id::text AS raw_id, t.action, h.status, to_char(h.observed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US') AS at
          FROM ledger_tx_status_history h JOIN ledger_transactions t ON t.raw_id = h.raw_id`,
    );
    const byRecord = new Map<string, { action: string; first: number; packaged: number | null }>();
    for (const h of history) {
      const at = Date.parse(`${h.at}Z`) + Number(h.at.slice(-3)) / 1000;
      const entry = byRecord.get(h.raw_id) ?? { action: h.action, first: at, packaged: null };
      entry.first = Math.min(entry.first, at);
      if (h.status === 'packaged') entry.packaged = Math.min(entry.packaged ?? at, at);
      byRecord.set(h.raw_id, entry);
    }
    const waits = [...byRecord.values()]
      .filter((r) => r.packaged !== null && r.packaged > r.first)
      .map((r) => ({
        day: new Date(r.first).toISOString().slice(0, 10),
        action: r.action,
        seconds: (r.packaged! - r.first) / 1000,
      }));
    assert.ok(waits.length >= 5, `records were seen confirmed, then packaged (${waits.length})`);
    const view = await queryRows<{
      day: string;
      action: string;
      records: string;
      p50_seconds: number;
      max_seconds: number;
    }>(
      db.database.db,
      sql`SELECT day::text AS day, action, records::text AS records, p50_seconds, max_seconds FROM ledger_status_latency`,
    );
    const groups = new Map<string, number[]>();
    for (const w of waits) {
      const key = `${w.day} ${w.action}`;
      groups.set(key, [...(groups.get(key) ?? []), Number(w.seconds)]);
    }
    assert.equal(view.length, groups.size);
    for (const row of view) {
      const seconds = (groups.get(`${row.day} ${row.action}`) ?? []).sort((a, b) => a - b);
      assert.equal(Number(row.records), seconds.length, `${row.day} ${row.action}`);
      assert.ok(Math.abs(Number(row.max_seconds) - seconds[seconds.length - 1]!) < 1e-5);
      // percentile_cont: linear interpolation between the two middle values.
      const mid = (seconds.length - 1) / 2;
      const p50 =
        seconds[Math.floor(mid)]! + (seconds[Math.ceil(mid)]! - seconds[Math.floor(mid)]!) * (mid % 1);
      assert.ok(Math.abs(Number(row.p50_seconds) - p50) < 1e-5, `p50 of ${row.day} ${row.action}`);
      assert.ok(Number(row.p50_seconds) > 0);
    }
  });
});
