import { UsageError } from '../../errors.js';
import { PAGING_MODES, type PagingMode } from '../../service-query/key-query.js';
import { createSimulator } from '../../simulator/simulator.js';
import type { SimulatorFaults } from '../../simulator/types.js';
import { intFlag } from '../command.js';
import { defineCommand } from '../define-command.js';

const usage = `Usage: ledger-indexer simulate [options]

Runs the reference ledger server: the service's query endpoints over a seeded, in-memory ledger
with live arrivals and faults on demand. Control endpoints live under /_sim/ (records as NDJSON,
their digest to compare a mirror with, pause/resume arrivals, add records, settle, faults,
stats). Stops on SIGINT/SIGTERM.

Data:
  --host H                   address to bind (default 127.0.0.1)
  --port P                   port; 0 picks a free one (default 8740)
  --records N                records present at start (default 10000)
  --seed S                   seed of the data set; same seed, same data (default 1)
  --arrivals PER_S           new records per second at the head (default 1; 0 = none)
  --package-delay-ms MS      confirmed -> packaged delay (default 2000)
  --burn-target-delay-ms MS  packaged burn -> targetChainTxHash delay (default 5000)
  --hole-rate R              share of rawIds never published, 0..1 (default 0.01)
  --late-rate R              share of arriving records that become visible late, 0..1
                             (rawIds above them listed first; default 0)
  --late-ms MS               how long a late record stays invisible after arriving
                             (default 1500)
  --paging MODE              list dialects served: page (page numbers only), key (the
                             deployed cursor/order/count dialect only; page ignored) or
                             both (key when a request has cursor, order or count;
                             default both)
  --max-count N              at most N records per key page, whatever count asks
                             (a silent cap; default 0 = none)
  --refuse-count-above N     answer a key request with count > N with 400
                             err_invalid_count (default 0 = never)

Faults (all default 0; change them at run time with POST /_sim/faults):
  --latency-ms MS            fixed delay added to every answer
  --latency-jitter-ms MS     random extra delay up to MS
  --error-rate R             share answered 500 or 503
  --rate-limit-rate R        share answered 429 with Retry-After
  --retry-after-s S          Retry-After seconds sent with 429 (default 1)
  --hang-rate R              share never answered
  --truncate-rate R          share of 200 answers cut in half
  --malformed-rate R         share of records served malformed (fixed per rawId)
  --tampered-rate R          share of records served with amount changed after signing
                             (fixed per rawId; ledgerHash and sig no longer match)
  --request-budget N         requests per second per client, then 429 (0 = unlimited)

  -h, --help                 this text

Maxima: --port 65535, --records 20000000, --arrivals 100000, delays and --late-ms 86400000 ms
(a day), latencies 600000 ms, --retry-after-s 3600, --request-budget 1000000, --hole-rate 0.99,
--max-count and --refuse-count-above 1000000.
`;

const DAY_MS = 86_400_000;

/** A number flag from 0 to `max` (every one has a maximum, so a typo cannot ask for a billion). */
function numberFlag(name: string, value: string | undefined, max: number): number | undefined {
  if (value === undefined) return undefined;
  const parsed = Number(value);
  if (value.trim() === '' || !Number.isFinite(parsed) || parsed < 0 || parsed > max) {
    throw new UsageError(`--${name} must be a number between 0 and ${max} (got '${value}')`);
  }
  return parsed;
}

/** The largest --max-count and --refuse-count-above. */
const COUNT_MAX = 1_000_000;

function pagingFlag(value: string | undefined): PagingMode {
  if (value === undefined) return 'both';
  if (!(PAGING_MODES as readonly string[]).includes(value)) {
    throw new UsageError(`--paging must be one of ${PAGING_MODES.join(', ')} (got '${value}')`);
  }
  return value as PagingMode;
}

export const command = defineCommand({
  name: 'simulate',
  usage,
  flags: {
    host: { type: 'string' },
    port: { type: 'string' },
    records: { type: 'string' },
    seed: { type: 'string' },
    arrivals: { type: 'string' },
    'package-delay-ms': { type: 'string' },
    'burn-target-delay-ms': { type: 'string' },
    'hole-rate': { type: 'string' },
    'late-rate': { type: 'string' },
    'late-ms': { type: 'string' },
    paging: { type: 'string' },
    'max-count': { type: 'string' },
    'refuse-count-above': { type: 'string' },
    'latency-ms': { type: 'string' },
    'latency-jitter-ms': { type: 'string' },
    'error-rate': { type: 'string' },
    'rate-limit-rate': { type: 'string' },
    'retry-after-s': { type: 'string' },
    'hang-rate': { type: 'string' },
    'truncate-rate': { type: 'string' },
    'malformed-rate': { type: 'string' },
    'tampered-rate': { type: 'string' },
    'request-budget': { type: 'string' },
  },
  async run({ values, io, onClose }) {
    const port = intFlag('port', values.port, 0, 65_535) ?? 8740;
    const records = intFlag('records', values.records, 0, 20_000_000) ?? 10_000;
    const holeRate = numberFlag('hole-rate', values['hole-rate'], 0.99);
    const lateRate = numberFlag('late-rate', values['late-rate'], 1);
    const lateMs = intFlag('late-ms', values['late-ms'], 0, DAY_MS);
    const faults: Partial<SimulatorFaults> = {};
    const fault = (key: keyof SimulatorFaults, flag: string, max: number) => {
      const value = numberFlag(flag, values[flag as keyof typeof values] as string | undefined, max);
      if (value !== undefined) faults[key] = value;
    };
    fault('latencyMs', 'latency-ms', 600_000);
    fault('latencyJitterMs', 'latency-jitter-ms', 600_000);
    fault('errorRate', 'error-rate', 1);
    fault('rateLimitRate', 'rate-limit-rate', 1);
    fault('retryAfterSeconds', 'retry-after-s', 3600);
    fault('hangRate', 'hang-rate', 1);
    fault('truncateRate', 'truncate-rate', 1);
    fault('malformedRate', 'malformed-rate', 1);
    fault('tamperedRate', 'tampered-rate', 1);
    fault('requestBudgetPerSecond', 'request-budget', 1_000_000);
    const seed = values.seed ?? '1';

    const simulator = createSimulator({
      records,
      seed: /^\d+$/.test(seed) ? Number(seed) : seed,
      arrivalsPerSecond: numberFlag('arrivals', values.arrivals, 100_000) ?? 1,
      packageDelayMs: intFlag('package-delay-ms', values['package-delay-ms'], 0, DAY_MS) ?? 2000,
      burnTargetDelayMs: intFlag('burn-target-delay-ms', values['burn-target-delay-ms'], 0, DAY_MS) ?? 5000,
      ...(holeRate !== undefined ? { holeRate } : {}),
      ...(lateRate !== undefined ? { lateRate } : {}),
      ...(lateMs !== undefined ? { lateMs } : {}),
      paging: pagingFlag(values.paging),
      maxCount: intFlag('max-count', values['max-count'], 0, COUNT_MAX) ?? 0,
      refuseCountAbove: intFlag('refuse-count-above', values['refuse-count-above'], 0, COUNT_MAX) ?? 0,
      faults,
    });
    onClose(() => simulator.close());
    let url: string;
    try {
      ({ url } = await simulator.listen({ host: values.host ?? '127.0.0.1', port }));
    } catch (error) {
      throw new UsageError(
        `cannot listen on ${values.host ?? '127.0.0.1'}:${port}: ${(error as Error).message}`,
      );
    }
    io.stdout.write(`ledger simulator listening on ${url} (${records} records, seed ${seed})\n`);
    if (!io.signal.aborted) {
      await new Promise<void>((resolve) =>
        io.signal.addEventListener('abort', () => resolve(), { once: true }),
      );
    }
    return 0;
  },
});
