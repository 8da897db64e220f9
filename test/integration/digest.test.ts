import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { openDatabase } from '../../src/db/connect.js';
import { digestStoredRecords } from '../../src/db/queries/digest-rows.js';
import { migrateDatabase } from '../../src/db/schema/migrate-database.js';
import type { MirrorDigest } from '../../src/digest/range-digest.js';
import { DatabaseError } from '../../src/errors.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { runMain } from '../helpers/run-main.js';

const run = runMain;

async function simDigest(url: string, query: string): Promise<MirrorDigest> {
  const response = await fetch(`${url}/_sim/digest?${query}`);
  assert.equal(response.status, 200);
  return (await response.json()) as MirrorDigest;
}

interface AgainstJson {
  against: {
    equal: boolean;
    kind: string;
    mirror: { count: number };
    other: { count: number };
    differences: Array<{
      from: number;
      to: number;
      first: { rawId: number; missingOn: string | null; fields: string[] } | null;
    }>;
  };
}

const RECORDS = 1500;

describe('digest and verify --against', () => {
  let sim: Simulator;
  let simUrl: string;
  let one: TestDatabase;
  let two: TestDatabase;
  let envOne: Record<string, string>;
  let envTwo: Record<string, string>;
  /** Stored rawIds, in order, to pick records from. */
  let rawIds: number[];

  before(async () => {
    sim = createSimulator({ records: RECORDS, seed: 23, holeRate: 0.05 });
    simUrl = (await sim.listen()).url;
    [one, two] = await Promise.all([createTestDatabase(), createTestDatabase()]);
    const base = { LEDGER_BASE_URL: simUrl, LEDGER_REQUESTS_PER_SECOND: '0', LOG_LEVEL: 'silent' };
    assert.equal((await run(['sync'], { ...base, DATABASE_URL: one.url })).code, 0);
    assert.equal((await run(['sync'], { ...base, DATABASE_URL: two.url })).code, 0);
    // The comparison alone: no service configured.
    envOne = { DATABASE_URL: one.url, LOG_LEVEL: 'silent' };
    envTwo = { DATABASE_URL: two.url, LOG_LEVEL: 'silent' };
    const rows = await one.database.db.execute(sql`select raw_id from ledger_transactions order by raw_id`);
    rawIds = (rows as unknown as { rows: Array<{ raw_id: string }> }).rows.map((r) => Number(r.raw_id));
    assert.equal(rawIds.length, RECORDS);
  });
  after(async () => {
    await sim.close();
    await Promise.all([one.drop(), two.drop()]);
  });

  it('two mirrors synced from the simulator give the simulator’s digest, in text and JSON', async () => {
    const first = await run(['digest', '--json', '--range-size', '500'], envOne);
    const second = await run(['digest', '--json', '--range-size', '500'], envTwo);
    assert.equal(first.code, 0, first.err);
    const digest = JSON.parse(first.out) as MirrorDigest;
    assert.deepEqual(JSON.parse(second.out), digest);
    assert.equal(digest.count, RECORDS);
    assert.ok(digest.ranges.length >= 3, 'the records span several ranges');
    assert.deepEqual(await simDigest(simUrl, 'rangeSize=500'), digest);

    const text = await run(['digest', '--range-size', '500'], envOne);
    const lines = text.out.trim().split('\n');
    assert.equal(lines.length, digest.ranges.length + 1);
    const [range] = digest.ranges;
    assert.match(
      lines[0]!,
      new RegExp(`^rawIds ${range!.from}–${range!.to} +${range!.count}  ${range!.hash}$`),
    );
    assert.match(
      lines.at(-1)!,
      new RegExp(`${RECORDS} records in ${digest.ranges.length} ranges, digest ${digest.hash}$`),
    );
  });

  it('reads bounds and small pages the same way as one big read', async () => {
    const from = rawIds[100]!;
    const to = rawIds[900]!;
    const bounded = await run(['digest', '--json', '--from', String(from), '--to', String(to)], envOne);
    const digest = JSON.parse(bounded.out) as MirrorDigest;
    assert.equal(digest.count, 801);
    assert.deepEqual(digest, await simDigest(simUrl, `from=${from}&to=${to}`));
    const paged = await digestStoredRecords(one.database.db, { from, to }, { pageRows: 7 });
    assert.deepEqual(paged, digest);
  });

  it('verify --against finds equal copies equal, a simulator and another mirror', async () => {
    const simulator = await run(['verify', '--against', simUrl], envOne);
    assert.equal(simulator.code, 0, simulator.out + simulator.err);
    assert.match(
      simulator.out,
      new RegExp(`this mirror ${RECORDS} records, the simulator ${RECORDS}: EQUAL`),
    );
    const database = await run(['verify', '--against', two.url, '--json'], envOne);
    assert.equal(database.code, 0, database.err);
    const report = JSON.parse(database.out) as AgainstJson & { complete?: boolean };
    assert.equal(report.against.equal, true);
    assert.equal(report.against.kind, 'database');
    assert.equal(report.complete, undefined, 'no completeness walk without a service');
  });

  it('with the service configured, runs the completeness report and the comparison', async () => {
    const { code, out } = await run(['verify', '--against', simUrl, '--json'], {
      ...envOne,
      LEDGER_BASE_URL: simUrl,
    });
    assert.equal(code, 0, out);
    const report = JSON.parse(out) as AgainstJson & { complete: boolean };
    assert.equal(report.complete, true);
    assert.equal(report.against.equal, true);
  });

  it('an embedded mirror (PGlite) gives the same digest as PostgreSQL', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ledger-indexer-digest-'));
    try {
      const env = { LEDGER_INDEXER_DATA_DIR: dir, LOG_LEVEL: 'silent' };
      assert.equal(
        (await run(['sync'], { ...env, LEDGER_BASE_URL: simUrl, LEDGER_REQUESTS_PER_SECOND: '0' })).code,
        0,
      );
      const embedded = await run(['digest', '--json'], env);
      assert.equal(embedded.code, 0, embedded.err);
      assert.deepEqual(JSON.parse(embedded.out), JSON.parse((await run(['digest', '--json'], envOne)).out));
      const verify = await run(['verify', '--against', one.url], env);
      assert.equal(verify.code, 0, verify.out + verify.err);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('a changed amount or status in one mirror is found in its range, at its rawId, with the field named', async () => {
    const amountAt = rawIds[1234]!;
    const statusAt = rawIds[321]!;
    await two.database.db.execute(
      sql`update ledger_transactions set amount = amount + 1 where raw_id = ${amountAt}`,
    );
    await two.database.db.execute(
      sql`update ledger_transactions set status = 'confirmed' where raw_id = ${statusAt}`,
    );
    const digests = await Promise.all(
      [envOne, envTwo].map(async (env) =>
        JSON.parse((await run(['digest', '--json', '--range-size', '500'], env)).out),
      ),
    );
    const [a, b] = digests as [MirrorDigest, MirrorDigest];
    const differing = a.ranges
      .filter((range, i) => range.hash !== b.ranges[i]?.hash)
      .map((range) => range.from);
    assert.deepEqual(
      differing,
      [...new Set([statusAt, amountAt].map((id) => Math.floor(id / 500) * 500))].sort((x, y) => x - y),
    );

    const { code, out } = await run(
      ['verify', '--against', two.url, '--range-size', '500', '--json'],
      envOne,
    );
    assert.equal(code, 1);
    const report = JSON.parse(out) as AgainstJson;
    assert.equal(report.against.equal, false);
    const firsts = report.against.differences.map((d) => d.first);
    assert.deepEqual(firsts, [
      { rawId: statusAt, missingOn: null, fields: ['status'] },
      { rawId: amountAt, missingOn: null, fields: ['amount'] },
    ]);
    for (const difference of report.against.differences) {
      const rawId = difference.first?.rawId ?? -1;
      assert.ok(difference.from <= rawId && rawId <= difference.to, 'the rawId lies in its range');
    }
    const text = await run(['verify', '--against', simUrl, '--range-size', '500'], envTwo);
    assert.equal(text.code, 1);
    assert.match(text.out, new RegExp(`first difference at rawId ${amountAt}: amount differs`));
    assert.match(text.out, new RegExp(`first difference at rawId ${statusAt}: status differs`));
  });

  it('a removed row is reported missing on that side', async () => {
    const removed = rawIds[42]!;
    await one.database.db.execute(sql`delete from ledger_transactions where raw_id = ${removed}`);
    const simulator = await run(['verify', '--against', simUrl, '--json'], envOne);
    assert.equal(simulator.code, 1);
    const report = JSON.parse(simulator.out) as AgainstJson;
    assert.equal(report.against.mirror.count, RECORDS - 1);
    assert.equal(report.against.other.count, RECORDS);
    assert.deepEqual(
      report.against.differences.map((d) => d.first),
      [{ rawId: removed, missingOn: 'mirror', fields: [] }],
    );
    // Ranges of 100: the rows changed in the mirror two lie in other ranges.
    const reversed = await run(['verify', '--against', one.url, '--range-size', '100'], envTwo);
    assert.equal(reversed.code, 1);
    assert.match(
      reversed.out,
      new RegExp(`first difference at rawId ${removed}: missing in the other mirror`),
    );
  });

  it('opens a database read-only when asked, PostgreSQL and PGlite alike', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ledger-indexer-read-only-'));
    const pglite = await openDatabase({ dataDir: dir });
    await migrateDatabase(pglite);
    await pglite.close();
    const databases = [
      await openDatabase({ databaseUrl: one.url, readOnly: true, maxConnections: 1 }),
      await openDatabase({ dataDir: dir, readOnly: true }),
    ];
    try {
      for (const database of databases) {
        await assert.rejects(
          database.db.execute(sql`update ledger_transactions set status = 'x' where raw_id = 0`),
          (error: unknown) => error instanceof DatabaseError && error.kind === 'read-only',
          database.kind,
        );
        assert.equal(
          (await digestStoredRecords(database.db, {})).count,
          database.kind === 'pglite' ? 0 : RECORDS - 1,
        );
      }
    } finally {
      for (const database of databases) await database.close();
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('bad flags exit 2 with one line naming the flag', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['digest', '--range-size', '0'], /--range-size must be a whole number/],
      [['digest', '--from', '10', '--to', '5'], /--to must be at least --from/],
      [['digest', '--to', 'x'], /--to must be a whole number/],
      [['verify', '--against', 'ftp://example.org'], /--against must be/],
      [['verify', '--against', 'not a url'], /--against must be/],
      [['verify', '--range-size', '10'], /--range-size needs --against/],
      [['verify'], /--base-url.*unless --against/],
    ];
    for (const [argv, message] of cases) {
      const { code, err } = await run(argv, envOne);
      assert.equal(code, 2, `${argv.join(' ')}: ${err}`);
      assert.equal(err.trim().split('\n').length, 1, err);
      assert.match(err, message);
    }
  });

  it('the simulator refuses bad digest parameters and too wide line requests', async () => {
    for (const query of [
      'from=x',
      'to=-1',
      'rangeSize=0',
      'from=10&to=5',
      'lines=1',
      'from=0&to=5000&lines=1',
    ]) {
      const response = await fetch(`${simUrl}/_sim/digest?${query}`);
      assert.equal(response.status, 400, query);
    }
  });

  it('a database that is not there fails digest with one line and exit 1', async () => {
    const url = new URL(one.url);
    url.pathname = '/ledger_no_such_database';
    const { code, out, err } = await run(['digest'], { DATABASE_URL: url.toString(), LOG_LEVEL: 'silent' });
    assert.equal(code, 1);
    assert.equal(out, '');
    assert.equal(
      err,
      'ledger-indexer digest: the database failed: database does not exist (SQLSTATE 3D000 in migration-state)\n',
    );
  });

  it('a database that is not there fails verify with one line naming the other mirror', async () => {
    const url = new URL(two.url);
    url.pathname = '/ledger_no_such_database';
    url.password = 'secret';
    url.username = 'postgres';
    const { code, err } = await run(['verify', '--against', url.toString()], envOne);
    assert.equal(code, 1);
    assert.equal(err.trim().split('\n').length, 1, err);
    assert.match(err, /the other mirror \(postgres:\/\/postgres:\*\*\*@/);
    assert.doesNotMatch(err, /secret/);
  });
});
