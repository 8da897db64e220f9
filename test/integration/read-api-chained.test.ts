/**
 * The mirror as a service: this project's own client reads the read API as it reads the ledger
 * service, so a second mirror synced from the first holds the same records (equal digests).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { HttpSurface } from '../../src/http/server.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { openTestSurface } from '../helpers/http-surface.js';
import { runMain } from '../helpers/run-main.js';

let simulator: Simulator;
let first: TestDatabase;
let surface: HttpSurface;
const stop = new AbortController();

before(async () => {
  simulator = createSimulator({ records: 1200, seed: 31, arrivalsPerSecond: 0 });
  const serviceUrl = (await simulator.listen()).url;
  first = await createTestDatabase();
  const synced = await runMain(['sync'], {
    LEDGER_BASE_URL: serviceUrl,
    DATABASE_URL: first.url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LOG_LEVEL: 'silent',
  });
  assert.equal(synced.code, 0, synced.err);
  surface = await openTestSurface({ testDb: first, signal: stop.signal });
});

after(async () => {
  stop.abort();
  await surface?.close();
  await simulator?.close();
  await first?.drop();
});

async function digest(url: string): Promise<unknown> {
  const run = await runMain(['digest', '--json'], { DATABASE_URL: url, LOG_LEVEL: 'silent' });
  assert.equal(run.code, 0, run.err);
  return JSON.parse(run.out);
}

describe('read API: a mirror of the mirror', () => {
  for (const paging of ['key', 'page']) {
    it(`syncs a second mirror from the first by ${paging} with the same records`, async () => {
      const second = await createTestDatabase();
      try {
        const synced = await runMain(['sync', '--paging', paging], {
          LEDGER_BASE_URL: surface.url,
          DATABASE_URL: second.url,
          LEDGER_REQUESTS_PER_SECOND: '0',
          LOG_LEVEL: 'silent',
        });
        assert.equal(synced.code, 0, synced.out + synced.err);
        const original = (await digest(first.url)) as { count: number };
        assert.ok(original.count > 1000, `${original.count} records`);
        assert.deepEqual(await digest(second.url), original);
      } finally {
        await second.drop();
      }
    });
  }
});
