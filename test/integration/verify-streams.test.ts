import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { runMain } from '../helpers/run-main.js';

const run = runMain;

interface Report {
  complete: boolean;
  streams: Array<{
    stream: string;
    complete: boolean;
    missing: { count: number; rawIds: number[] } | null;
    problems: string[];
  }>;
}

describe('verify checks account and filtered streams record by record', () => {
  let db: TestDatabase;
  let sim: Simulator;
  let env: Record<string, string>;
  let url: string;

  before(async () => {
    db = await createTestDatabase();
    sim = createSimulator({ records: 400, seed: 21, arrivalsPerSecond: 0 });
    url = (await sim.listen()).url;
    env = { DATABASE_URL: db.url, LEDGER_BASE_URL: url, LOG_LEVEL: 'silent' };
  });
  after(async () => {
    await sim.close();
    await db.drop();
  });

  it('names the record an account stream lists that the table lacks', async () => {
    // The busiest sender: its list spans several pages.
    const records = (await (await fetch(`${url}/_sim/records`)).text())
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as { from: string });
    const counts = new Map<string, number>();
    for (const r of records) counts.set(r.from, (counts.get(r.from) ?? 0) + 1);
    const account = [...counts].sort((a, b) => b[1] - a[1])[0]![0];

    assert.equal((await run(['sync', '--account', account], env)).code, 0);
    assert.equal((await run(['sync', '--action', 'burn'], env)).code, 0);
    const clean = await run(['verify', '--json'], env);
    assert.equal(clean.code, 0, clean.out);
    const cleanReport = JSON.parse(clean.out) as Report;
    assert.equal(cleanReport.streams.length, 2);
    for (const stream of cleanReport.streams)
      assert.deepEqual(stream.missing, { count: 0, rawIds: [] }, stream.stream);

    // One of the account's records (not a burn, so only its stream is concerned) disappears.
    const page = (await (await fetch(`${url}/txsByAccount/${account}?page=2`)).json()) as {
      txs: Array<{ rawId: number; action: string }>;
    };
    const victim = page.txs.find((tx) => tx.action !== 'burn')!.rawId;
    await db.database.db.execute(sql`DELETE FROM ledger_transactions WHERE raw_id = ${victim}`);

    const { code, out } = await run(['verify', '--json'], env);
    assert.equal(code, 1);
    const report = JSON.parse(out) as Report;
    const accountStream = report.streams.find((s) => s.stream !== 'txs?action=burn')!;
    assert.equal(accountStream.complete, false);
    assert.deepEqual(accountStream.missing, { count: 1, rawIds: [victim] });
    assert.match(
      accountStream.problems.join('\n'),
      new RegExp(`missing from the table \\(rawIds ${victim}\\)`),
    );
    const burns = report.streams.find((s) => s.stream === 'txs?action=burn')!;
    assert.equal(burns.complete, true, 'the burn list still holds every record it lists');

    const text = await run(['verify'], env);
    assert.match(text.out, /INCOMPLETE/);
    assert.match(
      text.out,
      new RegExp(
        `1 record\\(s\\) the service lists at or below the watermark are missing from the table \\(rawIds ${victim}\\)`,
      ),
    );
  });
});
