/**
 * The sinks a process runs, from its configuration: one list, built here. A new kind of sink is
 * one more entry (its target and its settings); the runner, the lease and the status page take it
 * as they take the webhook.
 */
import type { Config } from '../../config.js';
import type { Database } from '../../db/connect.js';
import type { Logger } from '../../logger.js';
import type { FeedFilter } from '../feed-event.js';
import { createNatsTarget } from './nats-target.js';
import { type SinkFeed, type SinkRunner, startSinkRunner } from './sink-runner.js';
import type { SinkTarget } from './sink-target.js';
import { createWebhookTarget } from './webhook-target.js';

/** A sink to run: its name (its row in `feed_sinks`), where it delivers, and what it takes. */
export interface ConfiguredSink {
  name: string;
  target: SinkTarget;
  filter: FeedFilter;
}

/** The sinks `config` asks for (none when no sink is set up). Nothing connects yet. */
export function configuredSinks(config: Config, logger?: Logger): ConfiguredSink[] {
  const sinks: ConfiguredSink[] = [];
  if (config.webhookUrl !== undefined && config.webhookSecret !== undefined) {
    const target = createWebhookTarget({
      sink: 'webhook',
      url: config.webhookUrl,
      secret: config.webhookSecret,
      timeoutMs: config.webhookTimeoutMs,
    });
    sinks.push({ name: 'webhook', target, filter: config.webhookFilter });
  }
  if (config.natsUrl !== undefined) {
    sinks.push({ name: 'nats', target: createNatsTarget({ config, logger }), filter: {} });
  }
  return sinks;
}

/** The sinks a process runs. */
export interface RunningSinks {
  readonly runners: readonly SinkRunner[];
  /** Stops every sink (a delivery in flight is sent again by the next run). */
  close(): Promise<void>;
}

/**
 * Starts a runner for each configured sink. Every process that serves the feed does: the sink's
 * lease lets one of them deliver it at a time, and another take over when that one stops.
 */
export function startConfiguredSinks(input: {
  config: Config;
  database: Database;
  feed: () => Promise<SinkFeed>;
  logger: Logger;
  /** Default `configuredSinks(config, logger)`. */
  sinks?: ConfiguredSink[] | undefined;
}): RunningSinks {
  const { config } = input;
  const runners = (input.sinks ?? configuredSinks(config, input.logger)).map((sink) =>
    startSinkRunner({
      ...sink,
      database: input.database,
      feed: input.feed,
      logger: input.logger,
      retry: { tries: config.sinkTries, minMs: config.sinkRetryMinMs, maxMs: config.sinkRetryMaxMs },
      leaseMs: config.sinkLeaseMs,
    }),
  );
  return {
    runners,
    async close() {
      await Promise.all(runners.map((runner) => runner.close()));
    },
  };
}
