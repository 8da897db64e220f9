import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { createContext } from '../../src/app/context.js';
import { readStateSnapshot } from '../../src/app/status/stream-health.js';
import { type SyncOptions, syncOnce } from '../../src/app/sync-once.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/connect.js';
import { queryRows } from '../../src/db/rows.js';
import {
  createDeferredIndexes,
  DEFERRABLE_INDEXES,
  RESTORE_LOCK_KEY,
} from '../../src/db/schema/deferred-indexes.js';
import { silentLogger } from '../../src/logger.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { runMain } from '../helpers/run-main.js';
import { assertMirrorsTruth } from './sync-truth.js';

const databases: TestDatabase[] = [];
const simulators: Simulator[] = [];

after(async () => {
  for (const simulator of simulators) await simulator.close();
  for (const db of databases) await db.drop();
});

async function setup(records: number) {
  const simulator = createSimulator({ records, seed: 21, arrivalsPerSecond: 0, paging: 'page' });
  simulators.push(simulator);
  const { url } = await simulator.listen();
  const testDb = await createTestDatabase();
  databases.push(testDb);
  return { simulator, url, testDb, database: testDb.database };
}

function configFor(url: string) {
  return loadConfig({ LEDGER_BASE_URL: url, LEDGER_REQUESTS_PER_SECOND: '0', LEDGER_CONCURRENCY: '4' });
}

async function sync(url: string, database: Database, options: SyncOptions = {}) {
  const ctx = await createContext({ config: configFor(url), logger: silentLogger(), database });
  try {
    return await syncOnce(ctx, options);
  } finally {
    await ctx.close();
  }
}

/** A first sync stopped after its first commit: the backfill is under way, not finished. */
async function stoppedBackfill(url: string, database: Database) {
  const stop = new AbortController();
  const result = await sync(url, database, { signal: stop.signal, onPage: () => stop.abort() });
  assert.equal(result.streams[0]?.mode, 'backfill');
  assert.equal(result.streams[0]?.finished, false, 'the backfill was stopped before its end');
  return result;
}

/** The mirror's indexes of the two tables, name to definition. */
async function indexes(database: Database): Promise<Map<string, string>> {
  const rows = await queryRows<{ name: string; definition: string }>(
    database.db,
    sql`SELECT indexname AS name, indexdef AS definition FROM pg_indexes
        WHERE tablename IN ('ledger_transactions', 'ledger_bundle_items') ORDER BY indexname`,
  );
  return new Map(rows.map((r) => [r.name, r.definition]));
}

const deferredNames = async (database: Database) =>
  (await queryRows<{ name: string }>(database.db, sql`SELECT name FROM deferred_indexes ORDER BY name`)).map(
    (r) => r.name,
  );

const sorted = (names: readonly string[]) => [...names].sort();

describe('read-side indexes during a first backfill', () => {
  it('are dropped while a first backfill runs and built as the migrations made them when it ends', async () => {
    const { simulator, url, database } = await setup(400);
    const migrated = await indexes(database);
    for (const name of DEFERRABLE_INDEXES) assert.ok(migrated.has(name), `${name} is made by the migrations`);

    await stoppedBackfill(url, database);
    const during = await indexes(database);
    for (const name of DEFERRABLE_INDEXES) assert.ok(!during.has(name), `${name} is not kept up meanwhile`);
    for (const kept of ['ledger_transactions_pkey', 'ledger_transactions_ledger_hash_key'])
      assert.ok(during.has(kept), `${kept} stays: the page write needs it`);
    for (const kept of [
      'ledger_transactions_time_idx',
      'ledger_transactions_first_seen_idx',
      'ledger_transactions_token_time_idx',
      'ledger_transactions_action_time_idx',
      'ledger_bundle_items_tag_idx',
    ])
      assert.ok(during.has(kept), `${kept} stays: its keys come in order, cheap to keep up`);
    assert.deepEqual(await deferredNames(database), sorted(DEFERRABLE_INDEXES));
    const rows = await queryRows<{ n: string }>(
      database.db,
      sql`SELECT count(*)::text AS n FROM ledger_transactions`,
    );
    assert.ok(Number(rows[0]?.n) > 0, 'the stopped run committed pages');

    const analyzed = () =>
      queryRows<{ relname: string; analyzed: boolean }>(
        database.db,
        sql`SELECT relname, last_analyze IS NOT NULL AS analyzed FROM pg_stat_user_tables
          WHERE relname IN ('ledger_transactions', 'ledger_bundle_items') ORDER BY relname`,
      );
    assert.ok(
      (await analyzed()).every((t) => !t.analyzed),
      'not analyzed while it runs',
    );
    const finished = await sync(url, database);
    assert.equal(finished.streams[0]?.finished, true);
    assert.deepEqual(await indexes(database), migrated, 'the same indexes, defined the same way');
    assert.deepEqual(
      (await analyzed()).map((t) => [t.relname, t.analyzed]),
      [
        ['ledger_bundle_items', true],
        ['ledger_transactions', true],
      ],
      'the tables analyzed once the backfill ends: the planner knows what they hold',
    );
    // What queries filter and sort on has statistics; the wide texts nothing filters on are skipped.
    const withStatistics = await queryRows<{ attname: string }>(
      database.db,
      sql`SELECT attname FROM pg_stats WHERE tablename = 'ledger_transactions'`,
    );
    const columns = new Set(withStatistics.map((r) => r.attname));
    for (const filtered of [
      'raw_id',
      'from_account',
      'to_account',
      'token_tag',
      'action',
      'ledger_hash',
      'ledger_time',
    ])
      assert.ok(columns.has(filtered), `statistics of ${filtered}`);
    for (const skipped of ['data', 'sig', 'internal_status', 'amount'])
      assert.ok(!columns.has(skipped), `no statistics of ${skipped}`);
    assert.deepEqual(await deferredNames(database), []);
    await assertMirrorsTruth(database.db, simulator);
  });

  it('stay in place for a mirror that already holds records', async () => {
    const { url, database } = await setup(60);
    await sync(url, database);
    const before = await indexes(database);
    const deferred = createDeferredIndexes({ database });
    assert.deepEqual(await deferred.defer(), []);
    assert.deepEqual(await indexes(database), before);
  });

  it('stay in place when a reader holds the table: the deferral gives up rather than queue behind it', async () => {
    const { testDb, database } = await setup(10);
    const before = await indexes(database);
    const reader = new pg.Client({ connectionString: testDb.url });
    await reader.connect();
    try {
      await reader.query('BEGIN');
      await reader.query('SELECT count(*) FROM ledger_transactions');
      assert.deepEqual(await createDeferredIndexes({ database }).defer(), []);
    } finally {
      await reader.end();
    }
    assert.deepEqual(await indexes(database), before);
    assert.deepEqual(await deferredNames(database), []);
  });

  it('are dropped once a statement that read and then wrote the table ends: asked again, not deadlocked', async () => {
    const { testDb, database } = await setup(10);
    // A statement that reads the table and then writes it, as the token refresh's retag does.
    const other = new pg.Client({ connectionString: testDb.url });
    await other.connect();
    try {
      await other.query('BEGIN');
      await other.query('SELECT count(*) FROM ledger_transactions');
      const deferring = createDeferredIndexes({ database }).defer();
      await new Promise((resolve) => setTimeout(resolve, 250));
      await other.query('UPDATE ledger_transactions SET updated_at = now() WHERE false');
      await other.query('COMMIT');
      assert.deepEqual(sorted(await deferring), sorted(DEFERRABLE_INDEXES));
    } finally {
      await other.end();
    }
    assert.deepEqual(await deferredNames(database), sorted(DEFERRABLE_INDEXES));
  });

  it('wait for the backfill while it is under way, unless a reader asks for them', async () => {
    const { url, database } = await setup(400);
    await stoppedBackfill(url, database);
    const deferred = createDeferredIndexes({ database });
    assert.deepEqual(await deferred.restore({ whenIdle: true }), [], 'the backfill builds them at its end');
    assert.equal((await deferred.pending()).length, DEFERRABLE_INDEXES.length);
    // Two readers at once: each index is built once, and neither fails.
    const [a, b] = await Promise.all([deferred.restore(), deferred.restore()]);
    assert.deepEqual(sorted([...a, ...b]), sorted(DEFERRABLE_INDEXES));
    assert.deepEqual(await deferredNames(database), []);
    for (const name of DEFERRABLE_INDEXES) assert.ok((await indexes(database)).has(name));
  });

  it('are left to the restore under way at the end of a backfill: a second one builds nothing beside it', async () => {
    const { url, database, testDb } = await setup(400);
    await stoppedBackfill(url, database);
    // The backfill ended elsewhere: nothing holds the builds back but another restore.
    await database.db.execute(sql`UPDATE sync_streams SET walk = NULL`);
    const deferred = createDeferredIndexes({ database });
    const other = new pg.Client({ connectionString: testDb.url });
    await other.connect();
    try {
      // Another process's restore, building.
      await other.query('SELECT pg_advisory_lock($1)', [RESTORE_LOCK_KEY]);
      assert.deepEqual(await deferred.restore({ whenIdle: true }), [], 'left to the one building');
      assert.equal((await deferred.pending()).length, DEFERRABLE_INDEXES.length);
      await other.query('SELECT pg_advisory_unlock($1)', [RESTORE_LOCK_KEY]);
    } finally {
      await other.end();
    }
    assert.deepEqual(sorted(await deferred.restore({ whenIdle: true })), sorted(DEFERRABLE_INDEXES));
    assert.deepEqual(await deferredNames(database), []);
  });

  it('are redefined while deferred by a migration that changes them: the build makes the new ones', async () => {
    const { url, database } = await setup(400);
    const migrated = await indexes(database);
    await stoppedBackfill(url, database);
    // A deferral before migration 0027: the account indexes without the rawId.
    const redefined = [
      'ledger_transactions_from_idx',
      'ledger_transactions_to_idx',
      'ledger_transactions_from_lower_idx',
      'ledger_transactions_to_lower_idx',
    ];
    await database.db.execute(
      sql`UPDATE deferred_indexes SET definition = replace(definition, ', raw_id)', ')')
          WHERE name IN (${sql.join(
            redefined.map((name) => sql`${name}`),
            sql`, `,
          )})`,
    );
    const kept = async () =>
      new Map(
        (
          await queryRows<{ name: string; definition: string }>(
            database.db,
            sql`SELECT name, definition FROM deferred_indexes`,
          )
        ).map((r) => [r.name, r.definition]),
      );
    assert.ok(!(await kept()).get('ledger_transactions_from_idx')?.includes('raw_id'), 'the old definition');
    const migration = readFileSync(
      new URL('../../migrations/0027_account_indexes_by_raw_id.sql', import.meta.url),
      'utf8',
    );
    for (const statement of migration.split('--> statement-breakpoint'))
      await database.db.execute(sql.raw(statement));
    const redefinedNow = await kept();
    for (const name of redefined)
      assert.equal(redefinedNow.get(name), migrated.get(name), `${name} kept as migrated`);
    assert.deepEqual(await deferredNames(database), sorted(DEFERRABLE_INDEXES), 'still deferred, none built');
    assert.equal((await sync(url, database)).streams[0]?.finished, true);
    assert.deepEqual(await indexes(database), migrated, 'built as the migrations define them');
  });

  it('are built by the migrate command after a backfill that was stopped', async () => {
    const { url, testDb, database } = await setup(400);
    await stoppedBackfill(url, database);
    const status = await runMain(['status'], { DATABASE_URL: testDb.url, LOG_LEVEL: 'silent' });
    assert.match(status.out, new RegExp(`${DEFERRABLE_INDEXES.length} read-side indexes deferred`));
    assert.equal((await readStateSnapshot(database)).deferredIndexes, DEFERRABLE_INDEXES.length, 'the gauge');
    const run = await runMain(['migrate'], { DATABASE_URL: testDb.url, LOG_LEVEL: 'silent' });
    assert.equal(run.code, 0, run.err);
    assert.match(run.out, new RegExp(`built ${DEFERRABLE_INDEXES.length} deferred indexes`));
    assert.deepEqual(await deferredNames(database), []);
    for (const name of DEFERRABLE_INDEXES) assert.ok((await indexes(database)).has(name));
    // The backfill then goes on with them and ends as any other.
    assert.equal((await sync(url, database)).streams[0]?.finished, true);
  });

  it('are built before verify reads the mirror', async () => {
    const { url, testDb, database } = await setup(400);
    await stoppedBackfill(url, database);
    const env = {
      DATABASE_URL: testDb.url,
      LEDGER_BASE_URL: url,
      LEDGER_REQUESTS_PER_SECOND: '0',
      LOG_LEVEL: 'silent',
    };
    const run = await runMain(['verify', '--json'], env);
    assert.equal(run.code, 1, 'the stopped backfill is reported incomplete');
    assert.deepEqual(await deferredNames(database), []);
    for (const name of DEFERRABLE_INDEXES) assert.ok((await indexes(database)).has(name));
    const status = await runMain(['status'], { DATABASE_URL: testDb.url, LOG_LEVEL: 'silent' });
    assert.doesNotMatch(status.out, /indexes deferred/);
  });
});
