/**
 * The mirror's read API against a service that moves: records arrive, get packaged and see their
 * withdrawals land while the mirror syncs. Once arrivals stop and the mirror has caught up (every
 * record final), the same random requests get the same answers from both.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import type { HttpSurface } from '../../src/http/server.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { openTestSurface } from '../helpers/http-surface.js';
import { compareAnswers, getJson, queryUniverse } from '../helpers/read-api-compare.js';
import { runMain } from '../helpers/run-main.js';
import { withSeed } from '../helpers/seed.js';
import { waitFor } from '../helpers/wait-for.js';

const QUERIES = 1500;

let simulator: Simulator;
let serviceUrl: string;
let testDb: TestDatabase;
let env: Record<string, string>;
let surface: HttpSurface;
const stop = new AbortController();

async function sync(): Promise<void> {
  const run = await runMain(['sync'], env);
  assert.equal(run.code, 0, run.err);
}

/** Whether every record the service lists is final: packaged, and a burn's withdrawal landed. */
async function serviceSettled(): Promise<boolean> {
  for (let cursor = 0; ; ) {
    const page = (await getJson(serviceUrl, `/txs?order=asc&count=100&cursor=${cursor}`)).json as {
      txs: Array<{ rawId: number; status: string; action: string; targetChainTxHash?: string }>;
      hasNextPage: boolean;
    };
    const open = page.txs.some(
      (t) => t.status !== 'packaged' || (t.action === 'burn' && t.targetChainTxHash === ''),
    );
    if (open) return false;
    if (!page.hasNextPage || page.txs.length === 0) return true;
    cursor = page.txs.at(-1)!.rawId;
  }
}

before(async () => {
  simulator = createSimulator({
    records: 1500,
    seed: 515,
    arrivalsPerSecond: 40,
    packageDelayMs: 300,
    burnTargetDelayMs: 600,
    maxCount: 100,
  });
  serviceUrl = (await simulator.listen()).url;
  testDb = await createTestDatabase();
  env = {
    LEDGER_BASE_URL: serviceUrl,
    DATABASE_URL: testDb.url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LEDGER_RECHECK_AFTER_MS: '0',
    LOG_LEVEL: 'silent',
  };
  surface = await openTestSurface({ testDb, signal: stop.signal });
});

after(async () => {
  stop.abort();
  await surface?.close();
  await simulator?.close();
  await testDb?.drop();
});

describe('read API: the mirror answers as the service, after records arrived', () => {
  it(`gives the same answers to ${QUERIES} random queries once the mirror caught up`, async () => {
    await sync();
    const first = simulator.headRawId();
    await waitFor('records to arrive', () => simulator.headRawId() >= first + 60);
    await sync();
    await fetch(`${serviceUrl}/_sim/arrivals/pause`, { method: 'POST' });
    assert.ok(simulator.headRawId() > first + 60, 'records arrived during the syncs');
    await waitFor('the service to settle every record', serviceSettled, { everyMs: 200, timeoutMs: 60_000 });
    // The mirror catches up: the tail, then re-reads until no record waits for one.
    await waitFor(
      'the mirror to hold every record final',
      async () => {
        await sync();
        const [row] = await queryRows<{ n: string; top: string | null }>(
          testDb.database.db,
          sql`SELECT (SELECT count(*) FROM ledger_tx_rechecks)::text AS n,
                     (SELECT max(raw_id) FROM ledger_transactions)::text AS top`,
        );
        const answer = await fetch(`${surface.url}/txs?count=1`);
        await answer.arrayBuffer();
        const head = String(simulator.headRawId());
        // The mirror says it holds the list up to the service's head.
        return row?.n === '0' && row.top === head && answer.headers.get('x-mirror-watermark') === head;
      },
      { everyMs: 100, timeoutMs: 90_000 },
    );
    const universe = await queryUniverse({
      database: testDb.database,
      serviceUrl,
      headRawId: simulator.headRawId(),
    });
    await withSeed(async (rng) => {
      const seen = await compareAnswers({
        rng,
        universe,
        serviceUrl,
        mirrorUrl: surface.url,
        count: QUERIES,
      });
      assert.ok(seen.withRecords > 500 && seen.errors > 20, JSON.stringify(seen));
    });
  });
});
