/**
 * `verify` against a service that speaks only the deployed key dialect (one walk of each list,
 * a hundred records a request, compared with the table span by span), and the same suite against
 * a service that speaks only page numbers: a synced mirror is complete; a row lost, a row the
 * service does not list, and (by key) a row whose immutable fields were changed are named;
 * records not synced yet are said so, never missing.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startHttpServer } from '../helpers/http-server.js';
import { forward } from '../helpers/proxy.js';
import { runMain } from '../helpers/run-main.js';

interface StreamReport {
  stream: string;
  dialect: string;
  requests: number | null;
  complete: boolean;
  behind: number | null;
  serviceHead: number | null;
  serviceCount: { exact: number | null };
  count: {
    listed: number;
    stored: number;
    withoutRawId: number;
    above: number;
    extra: number;
    extraRawIds?: number[];
    differing?: { count: number; records: { rawId: number; fields: string[] }[] };
    missing: { count: number; rawIds: number[] };
    requests: number;
  };
  missing: { count: number; rawIds: number[] };
  settling: { count: number; rawIds: number[]; settled: number } | null;
  problems: string[];
}

interface Report {
  complete: boolean;
  dialect: string;
  streams: StreamReport[];
}

const RECORDS = 1500;

for (const paging of ['key', 'page'] as const) {
  describe(`verify against a service that speaks only ${paging === 'key' ? 'the key dialect' : 'page numbers'}`, () => {
    let db: TestDatabase;
    let sim: Simulator;
    let env: Record<string, string>;

    const verify = async (...args: string[]) => {
      const result = await runMain(['verify', '--json', ...args], env);
      const report = JSON.parse(result.out) as Report;
      const global = report.streams.find((s) => s.stream === 'txs')!;
      // Every report says how the lists were read, and what it cost.
      assert.equal(report.dialect, paging);
      assert.equal(global.dialect, paging);
      assert.ok(Number.isSafeInteger(global.requests) && global.requests! > 0, `requests ${global.requests}`);
      return { code: result.code, report, global };
    };

    before(async () => {
      db = await createTestDatabase();
      sim = createSimulator({ records: RECORDS, seed: 71, holeRate: 0.05, paging, packageDelayMs: 0 });
      env = { DATABASE_URL: db.url, LEDGER_BASE_URL: (await sim.listen()).url, LOG_LEVEL: 'silent' };
      const synced = await runMain(['sync'], env);
      assert.equal(synced.code, 0, synced.err);
    });
    after(async () => {
      await sim.close();
      await db.drop();
    });

    it('a synced mirror is complete, read in the service dialect', async () => {
      const { code, report, global } = await verify();
      assert.equal(code, 0, JSON.stringify(global.problems));
      assert.equal(report.dialect, paging);
      assert.equal(global.dialect, paging);
      assert.equal(global.count.listed, RECORDS);
      assert.equal(global.count.stored, RECORDS);
      assert.equal(global.serviceCount.exact, RECORDS);
      assert.deepEqual(global.missing, { count: 0, rawIds: [] });
      if (paging === 'key') {
        // One walk, a hundred records a request; no page count, no bisection.
        assert.ok(global.requests! <= Math.ceil(RECORDS / 100) + 1, `requests ${global.requests}`);
        assert.deepEqual(global.count.differing, { count: 0, records: [] });
        const text = await runMain(['verify'], env);
        assert.equal(text.code, 0, text.out);
        assert.match(text.out, /^txs: complete$/m);
        assert.match(
          text.out,
          /service 1500 = table 1500 \+ 0 missing \(\d+ requests by key, the whole list\)/,
        );
      }
    });

    it('names a row lost from the table', async () => {
      const rawIds = [...sim.records()].map((r) => r.rawId);
      const lost = rawIds[Math.floor(rawIds.length / 3)]!;
      await db.database.db.execute(sql`DELETE FROM ledger_transactions WHERE raw_id = ${lost}`);
      const { code, global } = await verify();
      assert.equal(code, 1);
      assert.equal(global.complete, false);
      assert.deepEqual(global.missing, { count: 1, rawIds: [lost] });
      assert.match(
        global.problems.join('\n'),
        new RegExp(
          `1 record\\(s\\) the service lists at or below the watermark are missing from the table \\(rawIds ${lost}\\)`,
        ),
      );
      assert.equal((await runMain(['sync', '--full'], env)).code, 0);
      assert.equal((await verify()).code, 0);
    });

    it('names a row the service does not list', async () => {
      // A hole of the rawId sequence below the watermark: a record there is not the service's.
      const listed = new Set([...sim.records()].map((r) => r.rawId));
      let extra = 10;
      while (listed.has(extra)) extra++;
      const [copied] = await queryRows<{ raw_id: string }>(
        db.database.db,
        sql`INSERT INTO ledger_transactions
            SELECT (jsonb_populate_record(t, jsonb_build_object('raw_id', ${extra}::bigint,
                     'ledger_hash', '0xextra'))).* FROM ledger_transactions t
            WHERE t.raw_id = (SELECT min(raw_id) FROM ledger_transactions)
            RETURNING raw_id::text`,
      );
      assert.equal(Number(copied!.raw_id), extra);
      const { code, global } = await verify();
      assert.equal(code, 1);
      assert.equal(global.count.extra, 1);
      assert.match(
        global.problems.join('\n'),
        /the table holds 1 record\(s\) of this list at or below the watermark that the service does not list/,
      );
      if (paging === 'key') {
        assert.deepEqual(global.count.extraRawIds, [extra]);
        assert.match(global.problems.join('\n'), new RegExp(`does not list \\(rawIds ${extra}\\)`));
      }
      await db.database.db.execute(sql`DELETE FROM ledger_transactions WHERE raw_id = ${extra}`);
      assert.equal((await verify()).code, 0);
    });

    if (paging === 'key')
      it('names a stored row whose immutable fields differ from the served record', async () => {
        const [changed] = await queryRows<{ raw_id: string }>(
          db.database.db,
          sql`UPDATE ledger_transactions SET fee = fee + 1
              WHERE raw_id = (SELECT max(raw_id) FROM ledger_transactions) RETURNING raw_id::text`,
        );
        const rawId = Number(changed!.raw_id);
        const { code, global } = await verify();
        assert.equal(code, 1);
        assert.deepEqual(global.count.differing, { count: 1, records: [{ rawId, fields: ['fee'] }] });
        assert.match(
          global.problems.join('\n'),
          new RegExp(`differ from the stored ones in immutable fields \\(rawId ${rawId}: fee\\)`),
        );
        await db.database.db.execute(
          sql`UPDATE ledger_transactions SET fee = fee - 1 WHERE raw_id = ${rawId}`,
        );
        assert.equal((await verify()).code, 0);
      });

    if (paging === 'key')
      it('a conflict an operator resolved fails verify no more, though the service still serves its version', async () => {
        const [changed] = await queryRows<{ raw_id: string }>(
          db.database.db,
          sql`UPDATE ledger_transactions SET amount = amount + 1
              WHERE raw_id = (SELECT max(raw_id) FROM ledger_transactions) RETURNING raw_id::text`,
        );
        const rawId = Number(changed!.raw_id);
        // A full sync sees the served version again: the stored one is kept, the conflict recorded.
        const synced = await runMain(['sync', '--full'], env);
        assert.equal(synced.code, 0, synced.err);
        const recorded = await queryRows<{ n: number }>(
          db.database.db,
          sql`SELECT count(*)::int AS n FROM ledger_tx_conflicts WHERE raw_id = ${rawId}`,
        );
        assert.equal(recorded[0]?.n, 1);
        assert.equal((await verify()).code, 1, 'an open conflict fails verify');
        await db.database.db.execute(
          sql`UPDATE ledger_tx_conflicts SET resolved_at = now() WHERE raw_id = ${rawId}`,
        );
        const resolved = await verify();
        assert.equal(resolved.code, 0, JSON.stringify(resolved.global.problems));
        assert.deepEqual(resolved.global.count.differing, { count: 0, records: [] });
        // The same version served again keeps it resolved.
        assert.equal((await runMain(['sync', '--full'], env)).code, 0);
        assert.equal((await verify()).code, 0);
        await db.database.db.execute(
          sql`UPDATE ledger_transactions SET amount = amount - 1 WHERE raw_id = ${rawId}`,
        );
        await db.database.db.execute(sql`DELETE FROM ledger_tx_conflicts`);
      });

    it('a record shown late, above the settled mark: settling, exit 0, and stored by the next sync', async () => {
      const rawIds = [...sim.records()].map((r) => r.rawId);
      const late = rawIds[rawIds.length - 5]!;
      // As a sync leaves a record the service showed only after the sync had read its span: not
      // stored, the settled mark below it and the head the sync saw waiting to settle.
      await db.database.db.execute(sql`DELETE FROM ledger_transactions WHERE raw_id = ${late}`);
      await db.database.db.execute(
        sql`UPDATE sync_streams SET settled_raw_id = ${late - 1}, settle_pending_raw_id = watermark,
              settle_pending_at = now() - interval '1 minute' WHERE key = 'txs'`,
      );
      const { code, global } = await verify();
      assert.equal(code, 0, JSON.stringify(global.problems));
      assert.equal(global.complete, true);
      assert.deepEqual(global.missing, { count: 0, rawIds: [] });
      assert.deepEqual(global.settling, { count: 1, rawIds: [late], settled: late - 1 });
      const text = await runMain(['verify'], env);
      assert.equal(text.code, 0, text.out);
      assert.match(text.out, /^txs: settling$/m);
      assert.match(
        text.out,
        new RegExp(`settling: 1 record\\(s\\) .* above the settled mark ${late - 1} .*rawIds ${late}`),
      );
      assert.equal((await runMain(['sync'], env)).code, 0);
      const after = await verify();
      assert.equal(after.code, 0);
      assert.equal(after.global.settling, null);
      assert.deepEqual(after.global.missing, { count: 0, rawIds: [] });
    });

    it('records listed above the watermark are not synced yet, not missing', async () => {
      sim.addRecords(5);
      const { code, global } = await verify();
      assert.equal(code, 0, JSON.stringify(global.problems));
      assert.equal(global.behind, 5);
      assert.equal(global.serviceHead, sim.headRawId());
      assert.deepEqual(global.missing, { count: 0, rawIds: [] });
    });
  });
}

describe('verify by key, malformed records served and an account stream', () => {
  let db: TestDatabase;
  let sim: Simulator;
  let env: Record<string, string>;
  // `afterLast`: served without a rawId after the last readable record, so above the watermark.
  const truth = { withoutRawId: 0, setAside: 0, afterLast: 0 };

  before(async () => {
    db = await createTestDatabase();
    sim = createSimulator({ records: 2000, seed: 73, paging: 'key', faults: { malformedRate: 0.05 } });
    env = { DATABASE_URL: db.url, LEDGER_BASE_URL: (await sim.listen()).url, LOG_LEVEL: 'silent' };
    for (const record of sim.records()) {
      if (record.malformed === 'missing_raw_id') truth.withoutRawId += 1;
      else if (record.malformed !== undefined) truth.setAside += 1;
      truth.afterLast = record.malformed === 'missing_raw_id' ? truth.afterLast + 1 : 0;
    }
    assert.ok(truth.withoutRawId > 10 && truth.setAside > 10, JSON.stringify(truth));
    // The list ends with one: the count must place it above the watermark, not below.
    assert.ok(truth.afterLast > 0, 'the list ends with a record without a readable rawId');
  });
  after(async () => {
    await sim.close();
    await db.drop();
  });

  it('counts the records served without a readable rawId apart; the mirror passes', async () => {
    assert.equal((await runMain(['sync'], env)).code, 0);
    const { code, out } = await runMain(['verify', '--json'], env);
    const report = JSON.parse(out) as Report;
    const global = report.streams.find((s) => s.stream === 'txs')!;
    assert.equal(code, 0, JSON.stringify(global.problems));
    assert.equal(report.dialect, 'key');
    assert.equal(global.count.listed, 2000 - truth.afterLast);
    assert.equal(global.count.above, truth.afterLast);
    assert.equal(global.count.withoutRawId, truth.withoutRawId - truth.afterLast);
    assert.equal(global.count.stored, 2000 - truth.withoutRawId);
    assert.equal(
      global.count.listed,
      global.count.stored + global.count.withoutRawId + global.count.missing.count - global.count.extra,
    );
  });

  it('counts each such record once where it ends an answer and the next answer lists it again', async () => {
    // Ten records an answer: 200 answers, several of which end with records without a rawId.
    const endsAnswer = [...sim.records()].filter((r, i) => r.malformed === 'missing_raw_id' && i % 10 === 9);
    assert.ok(endsAnswer.length > 0, 'some answer ends with a record without a readable rawId');
    const { code, out } = await runMain(['verify', '--json'], { ...env, LEDGER_PAGE_COUNT: '10' });
    const global = (JSON.parse(out) as Report).streams.find((s) => s.stream === 'txs')!;
    assert.equal(code, 0, JSON.stringify(global.problems));
    assert.equal(global.count.withoutRawId, truth.withoutRawId - truth.afterLast);
    assert.equal(global.count.listed, 2000 - truth.afterLast);
  });

  it("counts an account's records set aside after the global list saw them again", async () => {
    const busiest = new Map<string, number>();
    for (const r of sim.records())
      if (r.malformed !== undefined) busiest.set(r.from, (busiest.get(r.from) ?? 0) + 1);
    const account = [...busiest].sort((a, b) => b[1] - a[1])[0]![0];
    assert.equal((await runMain(['sync', '--account', account], env)).code, 0);
    // The global list walked again sees every record set aside after the account's list did.
    assert.equal((await runMain(['sync', '--full'], env)).code, 0);
    const { code, out } = await runMain(['verify', '--json'], env);
    assert.equal(code, 0, out);
    const stream = (JSON.parse(out) as Report).streams.find(
      (s) => s.stream !== 'txs',
    )! as Report['streams'][number] & {
      rejected: { setAside: number; unkeyableKept: number };
    };
    assert.ok(stream.rejected.setAside > 0, JSON.stringify(stream.rejected));
    assert.equal(stream.rejected.unkeyableKept, stream.count.withoutRawId, JSON.stringify(stream));
    assert.equal(
      stream.count.listed,
      stream.count.stored + stream.count.withoutRawId + stream.count.missing.count - stream.count.extra,
      JSON.stringify(stream.count),
    );
  });

  it('names the record an account stream lists that the table lacks', async () => {
    const counts = new Map<string, number>();
    for (const r of sim.records())
      if (r.malformed === undefined) counts.set(r.from, (counts.get(r.from) ?? 0) + 1);
    const account = [...counts].sort((a, b) => b[1] - a[1])[0]![0];
    assert.equal((await runMain(['sync', '--account', account], env)).code, 0);
    const clean = await runMain(['verify', '--json'], env);
    assert.equal(clean.code, 0, clean.out);
    const accountKey = (JSON.parse(clean.out) as Report).streams.find((s) => s.stream !== 'txs')!;
    assert.equal(accountKey.dialect, 'key');
    assert.ok(accountKey.count.listed >= counts.get(account)!, JSON.stringify(accountKey.count));

    const victim = [...sim.records()].find((r) => r.from === account && r.malformed === undefined)!.rawId;
    await db.database.db.execute(sql`DELETE FROM ledger_transactions WHERE raw_id = ${victim}`);
    const { code, out } = await runMain(['verify', '--json'], env);
    assert.equal(code, 1);
    const report = JSON.parse(out) as Report;
    for (const stream of report.streams) {
      assert.equal(stream.complete, false, stream.stream);
      assert.deepEqual(stream.missing, { count: 1, rawIds: [victim] }, stream.stream);
    }
  });
});

describe('verify by key far from the service', () => {
  for (const malformedRate of [0, 0.02]) {
    it(`reads the list in ranges at once, as a walk does, and finds the mirror complete (${malformedRate * 100} % malformed)`, async () => {
      const db = await createTestDatabase();
      const sim = createSimulator({
        records: 6000,
        seed: 72,
        holeRate: 0.02,
        paging: 'key',
        packageDelayMs: 0,
        faults: { malformedRate },
      });
      const target = (await sim.listen()).url;
      let inFlight = 0;
      let most = 0;
      // Every answer 20 ms away, counted while in flight.
      const proxy = await startHttpServer(async (request) => {
        inFlight++;
        most = Math.max(most, inFlight);
        try {
          await new Promise((resolve) => setTimeout(resolve, 20));
          return await forward(target, request);
        } finally {
          inFlight--;
        }
      });
      try {
        const env = { DATABASE_URL: db.url, LEDGER_BASE_URL: target, LOG_LEVEL: 'silent' };
        assert.equal((await runMain(['sync'], env)).code, 0);
        most = 0;
        const result = await runMain(['verify', '--json'], {
          ...env,
          LEDGER_BASE_URL: proxy.baseUrl,
          LEDGER_REQUESTS_PER_SECOND: '0',
        });
        const report = JSON.parse(result.out) as Report;
        assert.equal(result.code, 0, result.out.slice(-2000));
        const global = report.streams.find((s) => s.stream === 'txs')!;
        // Every record once: at or below the watermark, or (served without a rawId after the last) above it.
        assert.equal(global.count.listed + global.count.above, sim.count());
        assert.deepEqual(global.missing, { count: 0, rawIds: [] });
        assert.ok(most >= 3, `list requests in flight at once: ${most}`);
      } finally {
        await proxy.close();
        await sim.close();
        await db.drop();
      }
    });
  }
});
