import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { type AppContext, createContext } from '../../src/app/context.js';
import { createWorkerDeps } from '../../src/app/worker/worker-context.js';
import { loadConfig } from '../../src/config.js';
import { silentLogger } from '../../src/logger.js';
import { createRedisConnection } from '../../src/queue/connection.js';
import { createLedgerQueues } from '../../src/queue/queues.js';
import {
  createSharedRequestBudget,
  type SharedRequestBudget,
} from '../../src/queue/shared-request-budget.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { startHttpServer, type TestHttpServer } from '../helpers/http-server.js';
import { makeLedgerTx } from '../helpers/ledger-tx.js';
import { deletePrefix, TEST_REDIS_URL, uniquePrefix } from '../helpers/redis.js';

describe("a worker's client", () => {
  const redis = createRedisConnection(TEST_REDIS_URL, 'producer');
  const prefix = uniquePrefix('worker-client-budget');
  let server: TestHttpServer | undefined;
  let db: TestDatabase | undefined;
  let app: AppContext | undefined;
  after(async () => {
    await app?.close();
    await db?.drop();
    await server?.close();
    await deletePrefix(TEST_REDIS_URL, prefix);
    redis.disconnect();
  });

  it('takes every attempt from the shared budget: retries, re-reads, tokens and fees', async () => {
    const tx = makeLedgerTx();
    // Every third request fails with a 503, and one with a 429: each is retried by the client.
    server = await startHttpServer((request, index) => {
      if (index === 4) return { status: 429, headers: { 'retry-after': '1' } };
      if (index % 3 === 2) return { status: 503 };
      if (request.path === '/info') return { body: { tokenList: [] } };
      if (request.path === '/fees') return { body: { fees: [] } };
      if (request.path.startsWith('/txsByHash/')) return { body: { tx } };
      return { body: { currentPage: Number(request.query.get('page')), totalPages: 9, txs: [] } };
    });
    // The budget the workers share in Redis, watched.
    const shared = createSharedRequestBudget({ redis, prefix, perSecond: 1000 });
    const counted = { taken: 0, paused: [] as number[] };
    const budget: SharedRequestBudget = {
      take: async (signal) => {
        await shared.take(signal);
        counted.taken += 1;
      },
      pause: async (ms) => {
        counted.paused.push(ms);
        await shared.pause(ms);
      },
    };
    db = await createTestDatabase();
    const config = loadConfig({
      LEDGER_BASE_URL: server.baseUrl,
      LEDGER_RETRY_MIN_MS: '5',
      LEDGER_RETRY_MAX_MS: '20',
    });
    app = await createContext({
      config,
      logger: silentLogger(),
      database: db.database,
      migrate: false,
      budget,
    });
    const queues = createLedgerQueues({ connection: redis, prefix });
    try {
      const deps = createWorkerDeps({ app, queues, budget, signal: new AbortController().signal });
      for (let page = 1; page <= 4; page++) await deps.fetchPage({}, page);
      await deps.fetchByHash(tx.ledgerHash);
      await deps.refreshReference();
    } finally {
      await queues.close();
    }
    assert.ok(server.requests.length >= 9, `${server.requests.length} requests`);
    assert.equal(counted.taken, server.requests.length, 'one take per request sent');
    assert.deepEqual(counted.paused, [1000], "the 429's Retry-After paused the shared budget");
  });
});
