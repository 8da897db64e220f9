import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { runMain } from '../helpers/run-main.js';

/** Everything a refused run could have touched, as one comparable value. */
async function mirrorState(t: TestDatabase): Promise<unknown> {
  const [row] = await queryRows<Record<string, string | null>>(
    t.database.db,
    sql`SELECT
      (SELECT count(*)::text FROM ledger_transactions) AS records,
      (SELECT md5(string_agg(raw_id || ledger_hash || status || record_id || updated_at::text, ',' ORDER BY raw_id))
         FROM ledger_transactions) AS records_digest,
      (SELECT md5(string_agg(key || coalesce(watermark::text, '') || coalesce(walk::text, '') || updated_at::text
         || coalesce(lease_owner, ''), ',' ORDER BY key)) FROM sync_streams) AS streams,
      (SELECT count(*)::text FROM sync_runs) AS runs,
      (SELECT md5(string_agg(tag || listed_at::text, ',' ORDER BY tag)) FROM ledger_tokens) AS tokens,
      (SELECT count(*)::text FROM ledger_tx_conflicts) AS conflicts,
      (SELECT count(*)::text FROM rejected_records) AS rejected,
      (SELECT count(*)::text FROM ledger_tx_status_history) AS history`,
  );
  return row;
}

async function pinned(t: TestDatabase): Promise<{ raw_id: string; service_url: string } | undefined> {
  const rows = await queryRows<{ raw_id: string; service_url: string }>(
    t.database.db,
    sql`SELECT anchor_raw_id::text AS raw_id, service_url FROM mirrored_service`,
  );
  return rows[0];
}

async function count(t: TestDatabase, query: ReturnType<typeof sql>): Promise<number> {
  const [row] = await queryRows<{ n: string }>(t.database.db, query);
  return Number(row?.n);
}

describe('a mirror recognises the service it mirrors', () => {
  let t: TestDatabase;
  let mine: Simulator;
  let other: Simulator;
  let mineUrl: string;
  let otherUrl: string;
  let env: Record<string, string>;
  const sync = (url: string, ...flags: string[]) => runMain(['sync', '--base-url', url, ...flags], env);

  before(async () => {
    t = await createTestDatabase();
    // Records stay `confirmed` (empty id, timestamp 0) until settled: the anchor itself changes later.
    mine = createSimulator({ records: 0, seed: 41, packageDelayMs: 3_600_000, holeRate: 0 });
    other = createSimulator({ records: 0, seed: 42, packageDelayMs: 3_600_000, holeRate: 0 });
    mineUrl = (await mine.listen()).url;
    otherUrl = (await other.listen()).url;
    mine.addRecords(60);
    other.addRecords(60);
    env = { DATABASE_URL: t.url, LEDGER_REQUESTS_PER_SECOND: '0', LEDGER_RETRIES: '1', LOG_LEVEL: 'silent' };
    // Every record not final yet is re-read by the next run, however soon it comes.
    env.LEDGER_RECHECK_AFTER_MS = '0';
  });
  after(async () => {
    await mine?.close();
    await other?.close();
    await t?.drop();
  });

  it('an empty mirror adopts the service it first syncs', async () => {
    const first = await sync(mineUrl);
    assert.equal(first.code, 0, first.err);
    const pin = await pinned(t);
    assert.equal(pin?.raw_id, '1');
    assert.equal(pin?.service_url, new URL(mineUrl).toString());
    const confirmed = await count(
      t,
      sql`SELECT count(*) AS n FROM ledger_transactions WHERE status = 'confirmed'`,
    );
    assert.equal(confirmed, 60, 'the anchor and the others are not packaged yet');
  });

  it('accepts the same service after it grew and its records changed status, with one look-up', async () => {
    mine.settleAll();
    mine.addRecords(25);
    const lookups = () => mine.stats()['GET /txsByHash/{ledgerHash}']?.['200'] ?? 0;
    // A run right after the last one trusts the address that answered it; an hour later, it asks.
    const trusted = lookups();
    assert.equal((await sync(mineUrl)).code, 0);
    assert.equal(lookups() - trusted, 0, 'no look-up right after the last check');
    await t.database.db.execute(
      sql`UPDATE mirrored_service SET verified_at = verified_at - interval '1 hour'`,
    );
    const lookupsBefore = lookups();
    const later = await sync(mineUrl);
    assert.equal(later.code, 0, later.err);
    assert.equal(await count(t, sql`SELECT count(*) AS n FROM ledger_transactions`), 85);
    const anchor = await queryRows<{ status: string; record_id: string }>(
      t.database.db,
      sql`SELECT status, record_id FROM ledger_transactions WHERE raw_id = 1`,
    );
    assert.equal(anchor[0]?.status, 'packaged', 'the anchor record changed status meanwhile');
    assert.notEqual(anchor[0]?.record_id, '');
    assert.equal(await count(t, sql`SELECT count(*) AS n FROM ledger_tx_conflicts`), 0);
    assert.equal(lookups() - lookupsBefore, 1, 'the check is one look-up by hash');
  });

  it('refuses a service of another ledger with one line and exit 2, the mirror untouched', async () => {
    const before = await mirrorState(t);
    const refused = await sync(otherUrl);
    assert.equal(refused.code, 2, refused.err);
    const lines = refused.err.trimEnd().split('\n');
    assert.equal(lines.length, 1, refused.err);
    assert.match(
      lines[0]!,
      new RegExp(
        `^ledger-indexer sync: the database mirrors another ledger service \\(${new URL(mineUrl).toString()}\\): ` +
          `${new URL(otherUrl).toString()} does not know its record rawId 1 \\(0x[0-9a-f]{10}…\\);.*` +
          'ledger-indexer sync --adopt-service',
      ),
    );
    assert.deepEqual(await mirrorState(t), before);
    assert.deepEqual(other.stats()['GET /txs'], undefined, 'not one page read from the other service');

    // A mirror from before the anchor was pinned is recognised by its lowest record all the same.
    await t.database.db.execute(sql`DELETE FROM mirrored_service`);
    const unpinned = await sync(otherUrl);
    assert.equal(unpinned.code, 2, unpinned.err);
    assert.deepEqual(await mirrorState(t), before);
    assert.equal(await pinned(t), undefined);
  });

  it('--adopt-service syncs the other service and recognises the mirror by it from then on', async () => {
    const adopted = await sync(otherUrl, '--adopt-service');
    assert.equal(adopted.code, 0, adopted.err);
    assert.equal((await pinned(t))?.service_url, new URL(otherUrl).toString());
    const again = await sync(otherUrl);
    assert.equal(again.code, 0, again.err);
    const back = await sync(mineUrl);
    assert.equal(back.code, 2, back.err);
    assert.match(back.err, /does not know its record rawId \d+/);
  });
});

describe('the anchor of a mirror pinned before the table existed', () => {
  let t: TestDatabase;
  let service: Simulator;
  after(async () => {
    await service?.close();
    await t?.drop();
  });

  it('is its lowest stored record by number, not by text (rawId 9 before 10)', async () => {
    t = await createTestDatabase();
    service = createSimulator({ records: 30, seed: 43, holeRate: 0, arrivalsPerSecond: 0 });
    const { url } = await service.listen();
    const env = { DATABASE_URL: t.url, LEDGER_REQUESTS_PER_SECOND: '0', LOG_LEVEL: 'silent' };
    const first = await runMain(['sync', '--base-url', url], env);
    assert.equal(first.code, 0, first.err);
    // Records 1 to 8 gone and no pin: as by text, "10" would come before "9".
    await t.database.db.execute(sql`DELETE FROM ledger_transactions WHERE raw_id < 9`);
    await t.database.db.execute(sql`DELETE FROM mirrored_service`);
    const again = await runMain(['sync', '--base-url', url], env);
    assert.equal(again.code, 0, again.err);
    assert.equal((await pinned(t))?.raw_id, '9');
  });
});
