import type { IncomingMessage, ServerResponse } from 'node:http';
import { sql } from 'drizzle-orm';
import { type Database, openDatabase } from '../db/connect.js';
import { readFeedStatus } from '../db/queries/sink-status.js';
import { LedgerIndexerError } from '../errors.js';
import { DEFAULT_FEED_HTTP_LIMITS } from '../feed/feed-http.js';
import { openFeedService } from '../feed/feed-service.js';
import { type RunningSinks, startConfiguredSinks } from '../feed/sinks/configured-sinks.js';
import {
  type HttpSurface,
  jsonReply,
  MAX_CONNECTIONS,
  type Reply,
  type Routes,
  startHttpSurface,
} from '../http/server.js';
import { renderStatusPage, renderUnavailablePage } from '../http/status-page.js';
import type { QueueGaugeValues } from '../metrics/index.js';
import { checkBindable, isAuthorized } from './read-api/access.js';
import { createReadApi } from './read-api/read-routes.js';
import { READ_STATEMENT_TIMEOUT_MS } from './read-api/read-transaction.js';
import type { RouteSources } from './route-sources.js';
import { sharedRead, withinDeadline } from './shared-read.js';
import { createHeadProbe } from './status/service-heads.js';
import { PAGE_REFRESH_SECONDS, readStatusPage } from './status/status-page-data.js';
import { buildStatusReport, type QueueReport, statusJson } from './status/status-report.js';
import { notMigratedLine, readReadiness, readStateSnapshot } from './status/stream-health.js';

/** How long `/health` waits for `select 1` before it calls the database unavailable. */
export const HEALTH_TIMEOUT_MS = 2000;

/**
 * The longest `/metrics`, `/status`, `/ready` and `/` wait for the database: past it they answer
 * without it (`/metrics` with `database_up 0`, the others 503), within the 5 s a scraper or a
 * probe usually allows.
 */
export const SURFACE_DEADLINE_MS = 4000;

/**
 * How long one computation of `/metrics` or `/status` answers requests again once done, so a
 * burst of them costs the database one read per path per second at most: their values may be
 * that much older than the database. (`/ready` and `/` share only the computation in flight.)
 */
export const SURFACE_REUSE_MS = 1000;

/**
 * The surface's own pool: a few connections whose connects and statements give up well within
 * {@link SURFACE_DEADLINE_MS}, apart from the pool the process syncs with.
 */
export const SURFACE_DATABASE = { connectMs: 2000, statementMs: 3000, maxConnections: 3 } as const;

/**
 * The read API's pool, apart from the status reads: its sessions are read-only and its statements
 * time out as each read's does (`read-transaction.ts`), so a look-up of one statement needs no
 * transaction; a few connections bound the load it can put on the database.
 */
export const READ_API_DATABASE = {
  connectMs: 2000,
  statementMs: READ_STATEMENT_TIMEOUT_MS,
  maxConnections: 4,
  readOnly: true,
} as const;

/** The HTTP surface's routes over the database (and a worker's queues). */
export function createRoutes(sources: RouteSources): Routes {
  const { database, logger, metrics } = sources;
  // The lag gauges, `/status` and the page need the service's head: asked here only when no
  // process saw it recently.
  const heads = createHeadProbe(sources);
  // Concurrent requests of a path share one read, bounded by the deadline; /status and /metrics
  // reuse it briefly after.
  const shared = <T>(read: () => Promise<T>, reuseMs = SURFACE_REUSE_MS) =>
    sharedRead(() => guarded(() => withinDeadline(read(), SURFACE_DEADLINE_MS)), { reuseMs });
  const readPage = shared(() => readStatusPage(sources, { heads }), 0);
  const readReady = shared(() => readReadiness(database), 0);
  const readStatus = shared(async () => {
    const behind = await notMigratedLine(database);
    if (behind !== null) throw new LedgerIndexerError(behind);
    const { config, signal, readQueues } = sources;
    await heads.refresh(signal);
    return buildStatusReport({ config, database, logger, signal, readQueues, askHeads: false });
  });
  const readState = shared(async () => {
    await heads.refresh(sources.signal);
    return readStateSnapshot(database);
  });
  const readFeed = shared(() => readFeedStatus(database.db));
  const readMetrics = sharedRead(
    async () => {
      const [snapshot, queues, feed] = await Promise.all([readState(), sources.readQueues?.(), readFeed()]);
      if ('failure' in snapshot) logger.warn({ reason: snapshot.failure }, 'metrics: the database failed');
      return { snapshot, queues, feed };
    },
    { reuseMs: SURFACE_REUSE_MS },
  );
  return {
    async page() {
      const data = await readPage();
      if ('failure' in data) {
        const reason = data.failure;
        return htmlReply(
          503,
          renderUnavailablePage({ reason, now: new Date(), refreshSeconds: PAGE_REFRESH_SECONDS }),
        );
      }
      return htmlReply(200, renderStatusPage(data));
    },
    async health() {
      const failure = await pingDatabase(database, HEALTH_TIMEOUT_MS);
      return failure === null
        ? jsonReply(200, { status: 'ok' })
        : jsonReply(503, { status: 'unavailable', reason: `the database failed: ${failure}` });
    },
    async ready() {
      const readiness = await readReady();
      if ('failure' in readiness) return jsonReply(503, { ready: false, reason: readiness.failure });
      return jsonReply(readiness.ready ? 200 : 503, readiness);
    },
    async status() {
      const report = await readStatus();
      if ('failure' in report) return jsonReply(503, { error: report.failure });
      return jsonReply(200, statusJson(report));
    },
    async metrics() {
      const { snapshot, queues, feed } = await readMetrics();
      metrics.state.setDatabase('failure' in snapshot ? null : snapshot);
      metrics.state.setFeed('failure' in feed ? null : feed);
      if (queues !== undefined) metrics.state.setQueues(queueGauges(queues));
      const text = await metrics.text();
      return { status: 200, contentType: metrics.contentType, body: text } satisfies Reply;
    },
  };
}

/**
 * Starts the HTTP surface on `LEDGER_HTTP_HOST` and `port` with the routes over `sources`, the
 * change feed (`/feed`) among them: the process stamps and serves it, and runs the configured
 * sinks (docs/design.md, "The change feed").
 */
export async function openHttpSurface(sources: RouteSources & { port: number }): Promise<HttpSurface> {
  const { httpHost, httpToken } = sources.config;
  // The surface serves the ledger's records: not beyond loopback without a token.
  checkBindable(httpHost, httpToken);
  // Reads of its own, bounded: a frozen database costs a request seconds, and the sync's pool
  // is neither slowed nor filled by scrapes.
  const database = sources.database.bounded(SURFACE_DATABASE);
  // What it serves of the mirror is read as LEDGER_READ_DATABASE_URL's role where one is given.
  const { readDatabaseUrl } = sources.config;
  const readSource =
    readDatabaseUrl === undefined
      ? sources.database
      : await openDatabase({
          databaseUrl: readDatabaseUrl,
          logger: sources.logger,
          readOnly: true,
          maxConnections: 1,
        });
  const readDatabase = readSource.bounded(READ_API_DATABASE);
  const feed = openFeedService({
    database: sources.database,
    readFrom: readSource,
    databaseUrl: sources.config.databaseUrl,
    retentionMs: sources.config.feedRetentionMs,
    logger: sources.logger,
  });
  let sinks: RunningSinks | undefined;
  sources.metrics.feed.watch(feed);
  const close = async () => {
    await sinks?.close();
    await feed.close();
    await Promise.all([database.close(), readDatabase.close()]);
    if (readSource !== sources.database) await readSource.close();
  };
  let surface: HttpSurface;
  try {
    const api = createReadApi({
      database: readDatabase,
      logger: sources.logger,
      token: httpToken,
      observer: sources.metrics.reads,
    });
    surface = await startHttpSurface({
      host: httpHost,
      port: sources.port,
      routes: {
        ...createRoutes({ ...sources, database, feedReaders: () => feed.consumers.list() }),
        api,
        feed: guardedFeed(feed.handle, httpToken),
      },
      logger: sources.logger,
      maxConnections: MAX_CONNECTIONS + DEFAULT_FEED_HTTP_LIMITS.maxClients,
    });
  } catch (error) {
    await close();
    throw error;
  }
  sources.logger.info({ url: surface.url }, 'http surface listening');
  sinks = startConfiguredSinks({
    config: sources.config,
    database: sources.database,
    feed: feed.hub,
    logger: sources.logger,
  });
  return {
    ...surface,
    async close() {
      await surface.close();
      await close();
    },
  };
}

/** The feed behind the read API's token: it serves the ledger's records too. */
function guardedFeed(
  handle: (request: IncomingMessage, response: ServerResponse) => Promise<void>,
  token: string | undefined,
): (request: IncomingMessage, response: ServerResponse) => Promise<void> {
  if (token === undefined) return handle;
  return async (request, response) => {
    if (isAuthorized(token, request.headers.authorization)) return handle(request, response);
    response.writeHead(401, { 'content-type': 'application/json', 'www-authenticate': 'Bearer' });
    response.end(JSON.stringify({ error: 'err_unauthorized' }));
  };
}

function htmlReply(status: number, body: string): Reply {
  return { status, contentType: 'text/html; charset=utf-8', body };
}

/** `null` when `select 1` answers within `timeoutMs`, else why not (one line, no secrets). */
async function pingDatabase(database: Database, timeoutMs: number): Promise<string | null> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<string>((resolve) => {
    timer = setTimeout(() => resolve(`no answer to select 1 within ${timeoutMs} ms`), timeoutMs);
  });
  try {
    return await Promise.race([
      database.db.execute(sql`select 1`).then(
        () => null,
        (error: unknown) => firstLine(error),
      ),
      timeout,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The value, or the failure's first line: a route answers 503 rather than 500 when the database fails. */
async function guarded<T>(read: () => Promise<T>): Promise<T | { failure: string }> {
  try {
    return await read();
  } catch (error) {
    return { failure: firstLine(error) };
  }
}

function queueGauges(report: QueueReport): QueueGaugeValues[] | null {
  return 'error' in report ? null : report.queues;
}

function firstLine(error: unknown): string {
  const line = (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}
