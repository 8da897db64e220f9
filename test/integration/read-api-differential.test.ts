/**
 * The mirror's read API against the service it mirrors: the simulator is synced into a test
 * database by the real `sync`, then thousands of random requests (both list dialects, every
 * filter, cursors, pages, accounts in any case, look-ups, fees, balances, bad parameters) go to
 * both, and their answers must be equal as parsed JSON, field for field.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { HttpSurface } from '../../src/http/server.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { openTestSurface } from '../helpers/http-surface.js';
import { byKey, compareAnswers, getJson, queryUniverse } from '../helpers/read-api-compare.js';
import { runMain } from '../helpers/run-main.js';
import { withSeed } from '../helpers/seed.js';

const QUERIES = 3000;

let simulator: Simulator;
let serviceUrl: string;
let testDb: TestDatabase;
let surface: HttpSurface;
const stop = new AbortController();

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
  surface = await openTestSurface({ testDb, signal: stop.signal });
});

after(async () => {
  stop.abort();
  await surface?.close();
  await simulator?.close();
  await testDb?.drop();
});

describe('read API: the mirror answers as the service', () => {
  it(`gives the same answers to ${QUERIES} random queries, bad ones included`, async () => {
    const universe = await queryUniverse({
      database: testDb.database,
      serviceUrl,
      headRawId: simulator.headRawId(),
    });
    assert.ok(
      universe.accounts.length > 50 && universe.mintHashes.length > 0,
      'a ledger with accounts and mints',
    );
    await withSeed(async (rng) => {
      const seen = await compareAnswers({
        rng,
        universe,
        serviceUrl,
        mirrorUrl: surface.url,
        count: QUERIES,
      });
      // The draw reached every kind of answer.
      assert.ok(seen.key > 500 && seen.page > 300 && seen.errors > 50, JSON.stringify(seen));
      assert.ok(seen.withRecords > 1000 && seen.balances > 50, JSON.stringify(seen));
    });
  });

  it('answers /info with the tokens of the service, as last refreshed', async () => {
    const service = (await getJson(serviceUrl, '/info')).json as {
      tokenList: Array<Record<string, unknown>>;
    };
    const mirror = await getJson(surface.url, '/info');
    assert.equal(mirror.status, 200);
    const tokens = (mirror.json as { tokenList: Array<Record<string, unknown>> }).tokenList;
    assert.deepEqual([...tokens].sort(byKey('tag')), [...service.tokenList].sort(byKey('tag')));
  });
});
