import { checkBindable } from '../../app/read-api/access.js';
import { type Config, ENV } from '../../config.js';
import { JOB_LOCK_MS, LEASE_MS, PAGES_PER_RANGE } from '../../defaults.js';
import { ConfigError } from '../../errors.js';
import { intFlag } from '../command.js';
import { defineCommand } from '../define-command.js';
import { failureLine } from '../run-outcome.js';

const usage = `Usage: ledger-indexer worker [options]

Runs the BullMQ workers: migrates the database, then takes jobs (stream syncs, parallel backfill
ranges and their completeness checks, re-reads of non-final records, token and fee refreshes)
until SIGTERM/SIGINT, then gives running jobs 3 s to stop at a page boundary (then abandons
their requests) and exits 0. Run as many as you like, on as many machines: one Postgres and one
Redis tie them together. A worker killed outright loses nothing; its jobs run again elsewhere
once their lock runs out. While Redis is unreachable it keeps retrying; when Redis refuses the
credentials of ${ENV.redisUrl} it exits 1 with one line.

Options:
  --base-url URL          the ledger service (default: $${ENV.ledgerBaseUrl})
  --paging MODE           list dialect: key, page or auto (asks the service once)
                          (default: $${ENV.ledgerPaging}, else auto)
  --count N               records asked per key-paging request, 10..1000
                          (default: $${ENV.ledgerPageCount}, else 100; halved when refused)
  --list-url URL          the host of the lists and single look-ups
                          (default: $${ENV.ledgerListUrl}, else the base URL)
  --concurrency N         jobs at once per queue in this process, 1..256 (default 4)
  --pages-per-range N     requests per backfill range job (pages, or answers by key),
                          1..10000 (default ${PAGES_PER_RANGE})
  --sequential-backfill   backfill with one stream walk instead of range jobs
  --lock-ms MS            job lock; a killed worker's jobs are picked up within about this,
                          1000..3600000 (default ${JOB_LOCK_MS})
  --lease-ms MS           stream lease length, 1000..3600000 (default ${LEASE_MS.worker})
  --recheck-after-ms MS   re-read records not final yet last read longer than this
                          before the run begins (default: $LEDGER_RECHECK_AFTER_MS, else 2000)
  --check-signatures      also recover each EVM sender's signature to its from address
                          (default: $LEDGER_CHECK_SIGNATURES, else false; the hash is always checked)
  --queue-prefix P        Redis key prefix of the queues (default ledger-indexer)
  --http-port P           serve /health, /ready, /status, /metrics, the status page / and
                          the service's query endpoints from the mirror on this port, 0..65535
                          (default: $${ENV.httpPort}, else 0 = off), on $${ENV.httpHost}
                          (default 127.0.0.1)

Exit codes: 0 drained after SIGTERM/SIGINT; 1 the database or Redis failed; 2 bad flags or settings.
Needs ${ENV.redisUrl}. The request budget (${ENV.requestsPerSecond}) is shared by all workers.`;

export const command = defineCommand({
  name: 'worker',
  usage,
  flags: {
    'base-url': { type: 'string' },
    paging: { type: 'string' },
    count: { type: 'string' },
    'list-url': { type: 'string' },
    concurrency: { type: 'string' },
    'pages-per-range': { type: 'string' },
    'sequential-backfill': { type: 'boolean' },
    'lock-ms': { type: 'string' },
    'lease-ms': { type: 'string' },
    'recheck-after-ms': { type: 'string' },
    'check-signatures': { type: 'boolean' },
    'queue-prefix': { type: 'string' },
    'http-port': { type: 'string' },
  },
  async run({ values, io, config: loadConfig, logger: createLogger }) {
    // Every flag is checked before anything starts: a bad one is a usage error (exit 2).
    const concurrency = intFlag('concurrency', values.concurrency, 1, 256);
    const lockMs = intFlag('lock-ms', values['lock-ms'], 1000, 3_600_000);
    const tuning = {
      pagesPerRange: intFlag('pages-per-range', values['pages-per-range'], 1, 10_000),
      parallelBackfill: values['sequential-backfill'] !== true,
      leaseMs: intFlag('lease-ms', values['lease-ms'], 1000, 3_600_000),
    };
    const config = loadConfig({
      ledgerBaseUrl: values['base-url'],
      ledgerPaging: values.paging,
      ledgerPageCount: values.count,
      ledgerListUrl: values['list-url'],
      recheckAfterMs: values['recheck-after-ms'],
      checkSignatures: values['check-signatures'] ? 'true' : undefined,
      httpPort: values['http-port'],
    });
    if (config.ledgerBaseUrl === undefined)
      throw new ConfigError('--base-url', `is required (or set ${ENV.ledgerBaseUrl})`);
    const withRedis = requireRedis(config);
    // Before anything starts: the surface serves the ledger's records.
    if ((config.httpPort ?? 0) > 0) checkBindable(config.httpHost, config.httpToken);
    const logger = createLogger(config.logLevel, 'ledger-indexer-worker');
    const { runWorker } = await import('../../app/worker/run-worker.js');
    await runWorker({
      config: withRedis,
      logger,
      signal: io.signal,
      concurrency,
      prefix: values['queue-prefix'],
      lockMs,
      tuning,
    });
    return 0;
  },
  // A signal drains the worker (exit 0); a failure is told as such even after one.
  fail(error, { io, logger }) {
    logger().error({ err: error }, 'worker failed');
    io.stderr.write(`ledger-indexer worker: ${failureLine(error)}\n`);
    return 1;
  },
});

/** `worker` and `schedule` need Redis: one line naming the setting when it is missing. */
export function requireRedis(config: Config): Config & { redisUrl: string } {
  if (config.redisUrl === undefined) {
    throw new ConfigError(ENV.redisUrl, 'is required by this command (e.g. redis://127.0.0.1:6379)');
  }
  return config as Config & { redisUrl: string };
}
