// Worker scaling: wall time of a parallel backfill of the simulator by 1 vs N worker processes,
// each request delayed by a fixed latency, against the ideal pages × latency ÷ total concurrency.
//
//   node --import tsx bench/worker-scaling.ts [--records 100000] [--latency-ms 50]
//        [--workers 1,4] [--concurrency 4] [--pages-per-range 32]
//
// Needs PostgreSQL (DATABASE_URL, default local) and Redis (REDIS_URL, default local).
import { parseArgs } from 'node:util';
import { sql } from 'drizzle-orm';
import { queryRows } from '../src/db/rows.js';
import { PAGES_PER_RANGE } from '../src/defaults.js';
import { createRedisConnection } from '../src/queue/connection.js';
import { createLedgerQueues } from '../src/queue/queues.js';
import { createSimulator } from '../src/simulator/index.js';
import { createTestDatabase } from '../test/helpers/database.js';
import { deletePrefix, spawnWorker, TEST_REDIS_URL, uniquePrefix } from '../test/helpers/redis.js';
import { waitFor } from '../test/helpers/wait-for.js';

const { values } = parseArgs({
  options: {
    records: { type: 'string', default: '100000' },
    'latency-ms': { type: 'string', default: '50' },
    workers: { type: 'string', default: '1,4' },
    concurrency: { type: 'string', default: '4' },
    'pages-per-range': { type: 'string', default: String(PAGES_PER_RANGE) },
  },
});
const records = Number(values.records);
const latencyMs = Number(values['latency-ms']);
const concurrency = Number(values.concurrency);
const workerCounts = String(values.workers).split(',').map(Number);

interface Result {
  workers: number;
  concurrency: number;
  pages: number;
  seconds: number;
  idealSeconds: number;
  ratio: number;
  rounds: number;
  stored: number;
}

async function runOnce(workers: number): Promise<Result> {
  const db = await createTestDatabase();
  const sim = createSimulator({ records, seed: 7, arrivalsPerSecond: 0, faults: { latencyMs } });
  const { url } = await sim.listen();
  const prefix = uniquePrefix('bench-scaling');
  const redis = createRedisConnection(TEST_REDIS_URL, 'producer');
  const queues = createLedgerQueues({ connection: redis, prefix });
  const env = {
    DATABASE_URL: db.url,
    REDIS_URL: TEST_REDIS_URL,
    LEDGER_BASE_URL: url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LOG_LEVEL: 'warn',
  };
  const args = [
    '--queue-prefix',
    prefix,
    '--concurrency',
    String(concurrency),
    '--pages-per-range',
    String(values['pages-per-range']),
  ];
  const procs = Array.from({ length: workers }, () =>
    spawnWorker({ env: { ...env, LOG_LEVEL: 'info' }, args }),
  );
  try {
    await Promise.all(procs.map((p) => p.ready));
    const started = Date.now();
    await queues.add('sync-stream', { stream: {} });
    const rounds = await waitFor(
      'the backfill to be proven complete',
      async () => {
        const rows = await queryRows<{ status: string; round: number }>(
          db.database.db,
          sql`select status, round from backfill_runs limit 1`,
        );
        return rows[0]?.status === 'done' ? rows[0].round + 1 : undefined;
      },
      { timeoutMs: 3_600_000, everyMs: 250 },
    );
    const seconds = (Date.now() - started) / 1000;
    const pages = Math.ceil(records / 10);
    const idealSeconds = (pages * latencyMs) / 1000 / (workers * concurrency);
    const [row] = await queryRows<{ n: string }>(
      db.database.db,
      sql`select count(*)::text as n from ledger_transactions`,
    );
    return {
      workers,
      concurrency,
      pages,
      seconds,
      idealSeconds,
      ratio: seconds / idealSeconds,
      rounds,
      stored: Number(row?.n),
    };
  } finally {
    for (const p of procs) p.child.kill('SIGTERM');
    await Promise.all(procs.map((p) => p.exited));
    await queues.close();
    redis.disconnect();
    await deletePrefix(TEST_REDIS_URL, prefix);
    await sim.close();
    await db.drop();
  }
}

const results: Result[] = [];
for (const workers of workerCounts) {
  const result = await runOnce(workers);
  results.push(result);
  console.log(
    `${workers} worker(s) x concurrency ${concurrency}: ${result.seconds.toFixed(1)} s for ${result.pages} pages ` +
      `(${result.stored} records, ${result.rounds} check round(s)); ideal ${result.idealSeconds.toFixed(1)} s; ` +
      `ratio ${result.ratio.toFixed(2)}`,
  );
}
const [first, last] = [results[0], results[results.length - 1]];
if (first && last && first !== last) {
  console.log(
    `speed-up ${first.workers} -> ${last.workers} workers: ${(first.seconds / last.seconds).toFixed(2)}x`,
  );
}
console.log(JSON.stringify({ records, latencyMs, results }));
