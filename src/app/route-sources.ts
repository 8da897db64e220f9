import type { Config } from '../config.js';
import type { Database } from '../db/connect.js';
import type { FeedConsumer } from '../feed/feed-consumers.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../metrics/index.js';
import type { HeadReadClient } from './status/service-heads.js';
import type { QueueReport } from './status/status-report.js';

/** What the routes read from: the database, and on a worker its queues. */
export interface RouteSources {
  config: Config;
  database: Database;
  logger: Logger;
  metrics: Metrics;
  /** The worker's queues, for `/status` and the queue gauges; absent: `status`'s own Redis reading. */
  readQueues?: (() => Promise<QueueReport>) | undefined;
  /** Aborted when the process stops: a `/status` in flight gives up its requests. */
  signal: AbortSignal;
  /** What the service head reads share with the process's client: a worker's budget, the request metrics. */
  shared?: HeadReadClient | undefined;
  /** Who reads the change feed from this process now (the status page shows them); absent: nobody can. */
  feedReaders?: (() => FeedConsumer[]) | undefined;
}
