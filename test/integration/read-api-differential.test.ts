/**
 * The mirror's read API against the service it mirrors: the simulator is synced into a test
 * database by the real `sync`, then thousands of random requests (both list dialects, every
 * filter, cursors, pages, accounts in any case, look-ups, fees, balances, bad parameters) go to
 * both, and their answers must be equal as parsed JSON, field for field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { openHttpSurface } from '../../src/app/http-routes.js';
import { loadConfig } from '../../src/config.js';
import { queryRows } from '../../src/db/rows.js';
import type { HttpSurface } from '../../src/http/server.js';
import { silentLogger } from '../../src/logger.js';
import { createMetrics } from '../../src/metrics/index.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { type QueryUniverse, randomQuery } from '../helpers/read-api-queries.js';
import { runMain } from '../helpers/run-main.js';
import { withSeed } from '../helpers/seed.js';

const QUERIES = 3000;

let simulator: Simulator;
let serviceUrl: string;
let testDb: TestDatabase;
let surface: HttpSurface;
const stop = new AbortController();

/** What an older record may lack: the mirror stores it empty and serves it so (see record-rows.ts). */
const EMPTY_EXPRESS = { chainTxHash: '', withdrawFee: '', refundLedgerHash: '', err: '' };

function withLegacyFields(record: Record<string, unknown>): Record<string, unknown> {
  return {
    ...record,
    version: record['version'] ?? '',
    targetChainTxHash: record['targetChainTxHash'] ?? '',
    express: record['express'] ?? EMPTY_EXPRESS,
  };
}

const byTag = (key: string) => (a: Record<string, unknown>, b: Record<string, unknown>) =>
  String(a[key]).localeCompare(String(b[key]));

/**
 * An answer as compared: older records' absent fields as the mirror serves them, and lists of
 * tokens by tag (the mirror keeps tokens by tag, the service in its own order).
 */
function comparable(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const answer = { ...(value as Record<string, unknown>) };
  if (Array.isArray(answer['txs']))
    answer['txs'] = (answer['txs'] as Array<Record<string, unknown>>).map(withLegacyFields);
  if (typeof answer['tx'] === 'object' && answer['tx'] !== null)
    answer['tx'] = withLegacyFields(answer['tx'] as Record<string, unknown>);
  if (Array.isArray(answer['fees']))
    answer['fees'] = [...(answer['fees'] as Array<Record<string, unknown>>)].sort(byTag('tokenTag'));
  if (Array.isArray(answer['balances']))
    answer['balances'] = [...(answer['balances'] as Array<Record<string, unknown>>)].sort(byTag('tag'));
  return answer;
}

async function get(base: string, path: string): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${base}${path}`);
  const text = await response.text();
  return { status: response.status, json: JSON.parse(text) };
}

async function universe(): Promise<QueryUniverse> {
  const db = testDb.database.db;
  const accounts = await queryRows<{ a: string }>(
    db,
    sql`SELECT a FROM (SELECT from_account AS a FROM ledger_transactions UNION SELECT to_account FROM ledger_transactions) x ORDER BY a`,
  );
  const hashes = await queryRows<{ h: string }>(
    db,
    sql`SELECT ledger_hash AS h FROM ledger_transactions ORDER BY raw_id`,
  );
  const mints = await queryRows<{ h: string }>(
    db,
    sql`SELECT target_chain_tx_hash AS h FROM ledger_transactions WHERE action = 'mint' AND target_chain_tx_hash <> '' ORDER BY raw_id`,
  );
  const info = (await get(serviceUrl, '/info')).json as { tokenList: Array<{ tag: string }> };
  return {
    accounts: accounts.map((r) => r.a),
    tags: info.tokenList.map((t) => t.tag),
    ledgerHashes: hashes.map((r) => r.h),
    mintHashes: mints.map((r) => r.h),
    headRawId: simulator.headRawId(),
  };
}

before(async () => {
  simulator = createSimulator({ records: 2500, seed: 4242, arrivalsPerSecond: 0, maxCount: 100 });
  serviceUrl = (await simulator.listen()).url;
  testDb = await createTestDatabase();
  const env = {
    LEDGER_BASE_URL: serviceUrl,
    DATABASE_URL: testDb.url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LOG_LEVEL: 'silent',
  };
  const synced = await runMain(['sync'], env);
  assert.equal(synced.code, 0, synced.err);
  surface = await openHttpSurface({
    config: loadConfig({ DATABASE_URL: testDb.url }),
    database: testDb.database,
    logger: silentLogger(),
    metrics: createMetrics(),
    port: 0,
    signal: stop.signal,
  });
});

after(async () => {
  stop.abort();
  await surface?.close();
  await simulator?.close();
  await testDb?.drop();
});

describe('read API: the mirror answers as the service', () => {
  it(`gives the same answers to ${QUERIES} random queries, bad ones included`, async () => {
    const u = await universe();
    assert.ok(u.accounts.length > 50 && u.mintHashes.length > 0, 'a ledger with accounts and mints');
    await withSeed(async (rng) => {
      const differences: string[] = [];
      const seen = { ok: 0, errors: 0, key: 0, page: 0, withRecords: 0, balances: 0 };
      for (let i = 0; i < QUERIES; i++) {
        const path = randomQuery(rng, u);
        const [service, mirror] = await Promise.all([get(serviceUrl, path), get(surface.url, path)]);
        if (service.status === 200) seen.ok++;
        else seen.errors++;
        if ('hasNextPage' in (service.json as object)) seen.key++;
        if ('currentPage' in (service.json as object)) seen.page++;
        const body = service.json as { txs?: unknown[]; tx?: unknown; balances?: unknown; balance?: unknown };
        if ((body.txs?.length ?? 0) > 0 || body.tx !== undefined) seen.withRecords++;
        if (body.balances !== undefined || body.balance !== undefined) seen.balances++;
        try {
          assert.equal(mirror.status, service.status);
          assert.deepEqual(comparable(mirror.json), comparable(service.json));
        } catch (error) {
          differences.push(`${path}: ${(error as Error).message.slice(0, 600)}`);
          if (differences.length >= 5) break;
        }
      }
      assert.deepEqual(differences, []);
      // The draw reached every kind of answer.
      assert.ok(seen.key > 500 && seen.page > 300 && seen.errors > 50, JSON.stringify(seen));
      assert.ok(seen.withRecords > 1000 && seen.balances > 50, JSON.stringify(seen));
    });
  });

  it('answers /info with the tokens of the service, as last refreshed', async () => {
    const service = (await get(serviceUrl, '/info')).json as { tokenList: Array<Record<string, unknown>> };
    const mirror = await get(surface.url, '/info');
    assert.equal(mirror.status, 200);
    const tokens = (mirror.json as { tokenList: Array<Record<string, unknown>> }).tokenList;
    assert.deepEqual([...tokens].sort(byTag('tag')), [...service.tokenList].sort(byTag('tag')));
  });
});
