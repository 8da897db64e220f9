import { createReadStream } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type { BenchContext } from './context.js';
import { freshDatabase, usingDatabase } from './context.js';
import { round } from './figures.js';
import { startWorkerFleet } from './indexer-workers.js';
import { simulatorBase } from './options.js';
import { startPrivateRedis } from './redis-server.js';
import { startSimulatorProcess } from './simulator-process.js';

/** Scenario 4: how long a new record takes from its arrival at the service to its row. */
export interface FreshnessFigures {
  workerProcesses: number;
  every: string;
  arrivalsPerSecond: number;
  durationMs: number;
  /** Records that arrived during the measured window. */
  arrived: number;
  /** Of those, how many had a row by the end (all, when the indexer keeps up). */
  stored: number;
  delayMs: { p50: number; p95: number; max: number; mean: number };
  /** Peak resident memory of the worker processes, summed (bytes). */
  peakRssBytes: number | null;
}

export async function runFreshnessScenario(context: BenchContext): Promise<FreshnessFigures> {
  const { options, setup } = context;
  context.log(
    `freshness: ${options.workerProcesses} workers every ${options.freshnessEvery}, ${options.freshnessArrivalsPerSecond} arrivals/s for ${options.freshnessDurationMs} ms`,
  );
  const simulator = await startSimulatorProcess(
    {
      records: options.freshnessHistory,
      ...simulatorBase(options),
      arrivalsPerSecond: options.freshnessArrivalsPerSecond,
    },
    setup.root,
  );
  const redis = await startPrivateRedis();
  try {
    await simulator.pauseArrivals();
    return await usingDatabase(await freshDatabase(context, 'freshness'), async (database) => {
      const fleet = await startWorkerFleet(setup, {
        count: options.workerProcesses,
        every: options.freshnessEvery,
        database,
        baseUrl: simulator.url,
        redisUrl: redis.url,
      });
      let peaks: Array<number | null> = [];
      let figures: FreshnessFigures;
      try {
        const waitForRows = async (target: number, timeoutMs: number): Promise<number> => {
          const deadline = Date.now() + timeoutMs;
          for (;;) {
            const rows = await database.countRows().catch(() => 0);
            if (rows >= target || Date.now() > deadline) return rows;
            await new Promise((resolve) => setTimeout(resolve, 100));
          }
        };
        const history = await simulator.dump(join(context.tmpDir, 'freshness-history.ndjson'));
        const caughtUp = await waitForRows(history, 120_000);
        if (caughtUp < history)
          throw new Error(`workers stored ${caughtUp} of the ${history} initial records`);
        const head = await simulator.headRawId();
        const windowStart = Date.now();
        await simulator.resumeArrivals();
        await new Promise((resolve) => setTimeout(resolve, options.freshnessDurationMs));
        await simulator.pauseArrivals();
        const truthFile = join(context.tmpDir, 'freshness.ndjson');
        const total = await simulator.dump(truthFile);
        await waitForRows(total, 60_000);
        const arrivals = await readArrivals(truthFile, head);
        const seen = await database.query<{ raw_id: string; ms: number }>(
          'SELECT raw_id::text AS raw_id, (extract(epoch from first_seen_at) * 1000)::float8 AS ms FROM ledger_transactions WHERE raw_id > $1',
          [head],
        );
        const delays: number[] = [];
        for (const row of seen) {
          const arrivedAt = arrivals.get(Number(row.raw_id));
          if (arrivedAt !== undefined) delays.push(row.ms - arrivedAt);
        }
        delays.sort((a, b) => a - b);
        figures = {
          workerProcesses: options.workerProcesses,
          every: options.freshnessEvery,
          arrivalsPerSecond: options.freshnessArrivalsPerSecond,
          durationMs: Date.now() - windowStart,
          arrived: arrivals.size,
          stored: delays.length,
          delayMs: {
            p50: round(percentile(delays, 0.5), 1),
            p95: round(percentile(delays, 0.95), 1),
            max: round(delays[delays.length - 1] ?? Number.NaN, 1),
            mean: round(delays.reduce((a, b) => a + b, 0) / Math.max(1, delays.length), 1),
          },
          peakRssBytes: null,
        };
      } finally {
        peaks = (await fleet.stop()).map((r) => r.peakRssBytes);
      }
      figures.peakRssBytes = peaks.reduce<number>((sum, p) => sum + (p ?? 0), 0) || null;
      return figures;
    });
  } finally {
    await redis.stop();
    await simulator.close();
  }
}

async function readArrivals(file: string, afterRawId: number): Promise<Map<number, number>> {
  const arrivals = new Map<number, number>();
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (line === '') continue;
    const record = JSON.parse(line) as { rawId: number; arrivedAtMs: number };
    if (record.rawId > afterRawId) arrivals.set(record.rawId, record.arrivedAtMs);
  }
  return arrivals;
}

/** Nearest-rank percentile of sorted values; NaN when empty. */
export function percentile(sorted: number[], q: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[index] ?? Number.NaN;
}
