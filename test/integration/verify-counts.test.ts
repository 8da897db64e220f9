import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { runMain } from '../helpers/run-main.js';

const run = runMain;

interface StreamReport {
  stream: string;
  complete: boolean;
  behind: number | null;
  holeCount: number;
  holesAbsentBy: string | null;
  count: {
    listed: number;
    stored: number;
    requests: number;
    missing: { count: number; rawIds: number[] };
    extra: number;
    unsettled: string | null;
  } | null;
  missing: { count: number; rawIds: number[] } | null;
  problems: string[];
}

interface Report {
  complete: boolean;
  streams: StreamReport[];
}

/**
 * Lists far longer than the walk limit: only the count against the table, and its bisection
 * where the counts differ, can tell a complete mirror from one that lost a row. By page numbers
 * (by key, verify walks every list whole: verify-key.test.ts).
 */
describe('verify counts every list against the table, beyond the walk limit', () => {
  let db: TestDatabase;
  let sim: Simulator;
  let env: Record<string, string>;
  let url: string;
  let account: string;
  let tokenTag: string;

  const page = async (path: string) =>
    (await (await fetch(`${url}${path}`)).json()) as { totalPages: number; txs: Array<{ rawId: number }> };
  const verify = async (walkLimit: string) => {
    const result = await run(['verify', '--walk-limit', walkLimit, '--json'], env);
    return { code: result.code, report: JSON.parse(result.out) as Report };
  };
  const streamOf = (report: Report, key: string) => report.streams.find((s) => s.stream === key)!;
  const deleteRow = (rawId: number) =>
    db.database.db.execute(sql`DELETE FROM ledger_transactions WHERE raw_id = ${rawId}`);

  before(async () => {
    db = await createTestDatabase();
    sim = createSimulator({ records: 600, seed: 33, holeRate: 0.05, arrivalsPerSecond: 0 });
    url = (await sim.listen()).url;
    env = { DATABASE_URL: db.url, LEDGER_BASE_URL: url, LOG_LEVEL: 'silent', LEDGER_PAGING: 'page' };
    // The busiest account: its list spans several pages.
    const counts = new Map<string, number>();
    for (const r of sim.records()) counts.set(r.from, (counts.get(r.from) ?? 0) + 1);
    account = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
    const info = (await (await fetch(`${url}/info`)).json()) as { tokenList: Array<{ tag: string }> };
    tokenTag = info.tokenList[0]!.tag;
    for (const args of [[], ['--account', account], ['--token-tag', tokenTag], ['--action', 'transfer']])
      assert.equal((await run(['sync', ...args], env)).code, 0, args.join(' '));
  });
  after(async () => {
    await sim.close();
    await db.drop();
  });

  it('an untouched mirror is complete, in a few requests per list, while records arrive', async () => {
    assert.ok((await page('/txs')).totalPages > 50);
    const head = sim.headRawId();
    // About 20 records a second, some of them the account's, between the reads of every list.
    const pump = setInterval(() => sim.addRecords(1), 50);
    let result: Awaited<ReturnType<typeof verify>>;
    try {
      result = await verify('2');
    } finally {
      clearInterval(pump);
    }
    assert.ok(sim.headRawId() > head, 'records arrived during verify');
    assert.equal(result.code, 0, JSON.stringify(result.report.streams.map((s) => s.problems)));
    assert.equal(result.report.streams.length, 4);
    for (const stream of result.report.streams) {
      assert.equal(stream.complete, true, stream.stream);
      assert.ok(stream.count, stream.stream);
      assert.equal(stream.count.listed, stream.count.stored, stream.stream);
      assert.deepEqual(stream.missing, { count: 0, rawIds: [] }, stream.stream);
      assert.ok(stream.count.requests <= 12, `${stream.stream}: ${stream.count.requests} requests`);
    }
    const global = streamOf(result.report, 'txs');
    assert.ok(global.holeCount > 0, 'the data set has holes in its rawIds');
    assert.equal(global.holesAbsentBy, 'count');
  });

  it('a row deleted in the middle of the global list: INCOMPLETE, exit 1, its rawId named', async () => {
    const accountIds = new Set<number>();
    for (const r of sim.records()) if (r.from === account || r.to === account) accountIds.add(r.rawId);
    const middle = await page(`/txs?page=${Math.floor((await page('/txs')).totalPages / 2)}`);
    const victim = middle.txs.find((tx) => !accountIds.has(tx.rawId))!.rawId;
    await deleteRow(victim);

    const { code, report } = await verify('0');
    assert.equal(code, 1);
    const global = streamOf(report, 'txs');
    assert.equal(global.complete, false);
    assert.deepEqual(global.missing, { count: 1, rawIds: [victim] });
    assert.equal(global.count!.listed - global.count!.stored, 1);
    assert.notEqual(global.holesAbsentBy, null, 'the other holes are still shown absent by the count');
    const accountStream = report.streams.find((s) => s.stream.startsWith('txsByAccount/'))!;
    assert.equal(accountStream.complete, true, "the victim is not in the account's list");

    const text = await run(['verify', '--walk-limit', '2'], env);
    assert.equal(text.code, 1);
    assert.match(text.out, /txs: INCOMPLETE/);
    assert.match(
      text.out,
      new RegExp(
        `problem: 1 record\\(s\\) the service lists at or below the watermark are missing from the table \\(rawIds ${victim}\\)`,
      ),
    );
    assert.match(
      text.out,
      /rawId holes \(rawIds not stored\): \d+ \(.*\); the service lists none of them but the missing/,
    );

    // A full walk stores it again, and the mirror is complete again.
    assert.equal((await run(['sync', '--full'], env)).code, 0);
    assert.equal((await verify('0')).code, 0);
  });

  it("a row deleted from an account's list: that stream INCOMPLETE, its rawId named", async () => {
    const key = (await verify('2')).report.streams.find((s) => s.stream.startsWith('txsByAccount/'))!.stream;
    const total = (await page(`/txsByAccount/${account}`)).totalPages;
    assert.ok(total > 2, `the account's list has ${total} pages, more than the walk limit`);
    const middle = await page(`/txsByAccount/${account}?page=${Math.ceil(total / 2)}`);
    const victims = [
      middle.txs[3]!.rawId,
      (await page(`/txsByAccount/${account}?page=${total}`)).txs.at(-1)!.rawId,
    ];
    for (const victim of victims) await deleteRow(victim);

    const { code, report } = await verify('2');
    assert.equal(code, 1);
    const stream = streamOf(report, key);
    assert.equal(stream.complete, false);
    assert.deepEqual(stream.missing, { count: 2, rawIds: [...victims].sort((a, b) => a - b) });
    assert.match(stream.problems.join('\n'), /missing from the table \(rawIds/);
    assert.deepEqual(
      streamOf(report, 'txs').missing?.rawIds,
      [...victims].sort((a, b) => a - b),
    );
  });
});
