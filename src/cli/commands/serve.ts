import { checkBindable } from '../../app/read-api/access.js';
import { DEFAULT_SERVE_PORT, ENV } from '../../config.js';
import { ConfigError } from '../../errors.js';
import { defineCommand } from '../define-command.js';

const usage = `Usage: ledger-indexer serve [--http-port P]

Serves the HTTP surface from PostgreSQL alone, for deployments that run 'sync' from cron (workers
serve it themselves with --http-port): GET /health (the database answers), /ready (every stream
backfilled and its last completeness check holds; else 503 with what is missing), /status (the
JSON of 'status --json'), /metrics (Prometheus), / (a status page for people, refreshing
itself: streams, the last hour's writes per minute, the last verify), /feed (the change feed:
every record stored and every change of its status, as Server-Sent Events resumed with
Last-Event-ID, or a long poll ?after=P&wait=20s; kept $${ENV.feedRetentionMs}, default 7d), and
the service's own query endpoints from the mirror (/txs, /tx/{hash}, /balances/{account}, ...:
docs/operating.md, "The read API"; beyond loopback only with $LEDGER_HTTP_TOKEN, which /feed and
the read API then ask for). Runs until SIGINT/SIGTERM, then exits 0. Never migrates: a database
behind the code makes /ready, /status and / answer 503 (and /feed until it is migrated).

Options:
  --http-port P   the port, 1..65535 (default: $${ENV.httpPort}, else ${DEFAULT_SERVE_PORT});
                  the address is $${ENV.httpHost} (default 127.0.0.1)

With ${ENV.webhookUrl} and ${ENV.webhookSecret} set, it also POSTs the feed to that webhook in
signed batches, at least once, from a position kept in the database (one process at a time).

Needs ${ENV.databaseUrl} (the embedded database is opened by one process at a time). With
${ENV.ledgerBaseUrl} set, /status asks the service for each stream's head, like 'status', and
/metrics does when no process saw it in the last 5 s, so the lag follows the service between two
runs of sync (the heads seen are kept in sync_streams); with ${ENV.redisUrl} set it adds the queue
depths.
Exit codes: 0 stopped by SIGINT/SIGTERM; 1 cannot listen; 2 bad flags or settings.`;

export const command = defineCommand({
  name: 'serve',
  usage,
  flags: { 'http-port': { type: 'string' } },
  async run({ values, io, config: loadConfig, logger: createLogger, onClose }) {
    const config = loadConfig({ httpPort: values['http-port'] });
    const port = config.httpPort ?? DEFAULT_SERVE_PORT;
    if (port === 0) {
      const setting = values['http-port'] === undefined ? ENV.httpPort : '--http-port';
      throw new ConfigError(
        setting,
        'must be a port from 1 to 65535 for serve (0 turns the surface off on worker)',
      );
    }
    checkBindable(config.httpHost, config.httpToken);
    if (config.databaseUrl === undefined) {
      throw new ConfigError(
        ENV.databaseUrl,
        'is required by serve (the embedded database is opened by one process at a time)',
      );
    }
    const logger = createLogger(config.logLevel, 'ledger-indexer-serve');
    const { openDatabase } = await import('../../db/connect.js');
    const { createMetrics } = await import('../../metrics/index.js');
    const { openHttpSurface } = await import('../../app/http-routes.js');
    const { whenAborted } = await import('../../abort.js');
    const database = await openDatabase({ databaseUrl: config.databaseUrl, logger, maxConnections: 4 });
    onClose(() => database.close());
    const metrics = createMetrics();
    const surface = await openHttpSurface({
      config,
      database,
      logger,
      metrics,
      port,
      signal: io.signal,
      shared: { observer: metrics.client },
    });
    onClose(() => surface.close());
    io.stdout.write(`ledger-indexer serve: listening on ${surface.url}\n`);
    await whenAborted(io.signal);
    logger.info({}, 'serve stopped');
    return 0;
  },
});
