/**
 * The change feed's NATS JetStream destination: each event of a batch is one message on
 * `<prefix>.<action>.<tokenTag>.<kind>` (nats-subjects.ts), its payload the event's JSON exactly
 * as `GET /feed` serves it, its `Nats-Msg-Id` header the event's position. A batch is published
 * with several messages awaiting their PubAck at once, in position order over one connection, and
 * counts as delivered only once every one is acknowledged. A replay (the runner delivers a batch
 * again after a crash or a failure) is deduplicated by the stream within its duplicate window: a
 * PubAck marked `duplicate` is success (docs/design.md, "The change feed").
 */
import { type JetStreamClient, type JetStreamManager, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { type Config, ENV } from '../../config.js';
import { ConfigError } from '../../errors.js';
import { type Logger, silentLogger } from '../../logger.js';
import { type NatsServer, parseNatsUrl } from '../../nats-settings.js';
import type { FeedEvent } from '../feed-event.js';
import { natsFailure } from './nats-failures.js';
import { ensureFeedStream, type FeedStreamSpec } from './nats-stream.js';
import { eventSubject } from './nats-subjects.js';
import { SinkDeliveryError, type SinkTarget } from './sink-target.js';

/** What {@link createNatsTarget} is given. */
export interface NatsTargetInput {
  /** The settings (`LEDGER_NATS_*`; `LEDGER_FEED_RETENTION` is the age of a stream created here). */
  config: Pick<
    Config,
    'natsUrl' | 'natsStream' | 'natsSubject' | 'natsDuplicateWindowMs' | 'natsToken' | 'feedRetentionMs'
  >;
  logger?: Logger;
  /** Deadline of a connection attempt, of each PubAck and of each JetStream request, ms. Default 10000. */
  timeoutMs?: number;
  /** Messages of a batch awaiting their PubAck at once. Default 64. */
  inFlight?: number;
}

/** The NATS destination: a {@link SinkTarget} that can also be readied at start. */
export interface NatsTarget extends SinkTarget {
  readonly kind: 'nats';
  /**
   * Connects and makes sure the stream exists and captures the feed's subjects, as the first
   * `deliver` does: a configuration the broker refuses shows at start. Throws a
   * `SinkDeliveryError`, like `deliver`.
   */
  ready(): Promise<void>;
}

/** One connection and what was checked over it. */
interface Session {
  nc: NatsConnection;
  js: JetStreamClient;
  jsm: JetStreamManager;
  /** Whether the stream was found (or created) capturing the subjects since the last "no responders". */
  streamChecked: boolean;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_IN_FLIGHT = 64;

/**
 * The NATS destination configured by `input.config` (`LEDGER_NATS_URL` must be set). Nothing
 * connects until {@link NatsTarget.ready} or the first `deliver`; a connection lost is opened
 * again by the next `deliver`.
 */
export function createNatsTarget(input: NatsTargetInput): NatsTarget {
  const { config } = input;
  if (config.natsUrl === undefined) {
    throw new ConfigError(ENV.natsUrl, 'is needed by the NATS destination of the change feed');
  }
  const server = parseNatsUrl(config.natsUrl, ENV.natsUrl);
  const logger = (input.logger ?? silentLogger()).child({ sink: 'nats', stream: config.natsStream });
  const timeoutMs = input.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const inFlight = input.inFlight ?? DEFAULT_IN_FLIGHT;
  const spec: FeedStreamSpec = {
    stream: config.natsStream,
    prefix: config.natsSubject,
    duplicateWindowMs: config.natsDuplicateWindowMs,
    maxAgeMs: config.feedRetentionMs,
  };
  let current: Promise<Session> | null = null;
  let closed = false;

  /** The open session, or a new one: a failed or closed one is forgotten, so the next call connects. */
  const session = (): Promise<Session> => {
    if (current === null) {
      const opening = openSession({ server, token: config.natsToken, timeoutMs, logger });
      current = opening;
      const forget = () => {
        if (current === opening) current = null;
      };
      opening.then((s) => s.nc.closed().then(forget), forget);
    }
    return current;
  };

  /** A session over which the stream was checked. */
  const ready = async (): Promise<Session> => {
    if (closed) throw new SinkDeliveryError('NATS: the destination is closed', { retryable: false });
    try {
      const s = await session();
      if (!s.streamChecked) {
        await ensureFeedStream(s.jsm, spec, logger);
        s.streamChecked = true;
      }
      return s;
    } catch (error) {
      throw natsFailure(
        error,
        `connecting to ${server.server} and checking stream ${spec.stream}`,
        timeoutMs,
      );
    }
  };

  const publish = async (s: Session, event: FeedEvent): Promise<void> => {
    try {
      const ack = await s.js.publish(eventSubject(spec.prefix, event), JSON.stringify(event), {
        msgID: String(event.position),
        timeout: timeoutMs,
      });
      if (ack.stream !== spec.stream) {
        throw new SinkDeliveryError(
          `NATS: position ${event.position} was stored by stream ${ack.stream}, not ${spec.stream}: ` +
            `another stream captures ${spec.prefix}.>`,
          { retryable: false },
        );
      }
    } catch (error) {
      const failure = natsFailure(error, `publishing position ${event.position}`, timeoutMs);
      // No responders: no stream took the subject (deleted, edited) or JetStream is not answering
      // (a restart, a leader election). Retryable; the next attempt checks the stream again first.
      if (failure.retryable) s.streamChecked = false;
      throw failure;
    }
  };

  return {
    kind: 'nats',
    async ready() {
      await ready();
    },
    async deliver(events) {
      const s = await ready();
      await inPositionOrder(events, (event) => publish(s, event), inFlight);
    },
    async close() {
      closed = true;
      const open = await current?.catch(() => null);
      // Drain: publishes already written are flushed before the connection closes.
      await open?.nc.drain().catch(() => undefined);
    },
  };
}

/** Connects (one attempt, within `timeoutMs`) and logs the connection's loss. */
async function openSession(input: {
  server: NatsServer;
  token: string | undefined;
  timeoutMs: number;
  logger: Logger;
}): Promise<Session> {
  const { server } = input;
  const nc = await connect({
    servers: server.server,
    ...(server.tls ? { tls: {} } : {}),
    ...(server.user !== undefined ? { user: server.user, pass: server.pass ?? '' } : {}),
    ...(input.token !== undefined ? { token: input.token } : {}),
    name: 'ledger-indexer change feed',
    timeout: input.timeoutMs,
    // A lost connection is not resumed: the client would send what it buffered meanwhile after
    // messages the loss swallowed, out of position order. The retry opens a new one.
    reconnect: false,
  });
  void logStatus(nc, input.logger);
  try {
    const jsm = await jetstreamManager(nc, { timeout: input.timeoutMs });
    return { nc, jsm, js: jetstream(nc, { timeout: input.timeoutMs }), streamChecked: false };
  } catch (error) {
    await nc.close();
    throw error;
  }
}

async function logStatus(nc: NatsConnection, logger: Logger): Promise<void> {
  try {
    for await (const status of nc.status()) {
      if (status.type === 'disconnect') {
        logger.warn(
          { server: status.server },
          'lost the connection to NATS; the next delivery opens another',
        );
      } else if (status.type === 'error') {
        logger.warn({ err: status.error }, 'NATS reported an error');
      }
    }
  } catch (error) {
    logger.debug({ err: error }, 'stopped watching the NATS connection');
  }
}

/**
 * Calls `publish` for each event, at most `inFlight` awaiting at once, started in position order
 * (one connection keeps that order on the wire, so the stream stores them in it). After a failure
 * no further one starts; once those in flight settled, the failure of the lowest position throws.
 */
async function inPositionOrder(
  events: readonly FeedEvent[],
  publish: (event: FeedEvent) => Promise<void>,
  inFlight: number,
): Promise<void> {
  let next = 0;
  const failures: Array<{ index: number; error: unknown }> = [];
  const lane = async (): Promise<void> => {
    while (failures.length === 0 && next < events.length) {
      const index = next++;
      try {
        await publish(events[index] as FeedEvent);
      } catch (error) {
        failures.push({ index, error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(inFlight, events.length) }, lane));
  const first = failures.sort((a, b) => a.index - b.index)[0];
  if (first !== undefined) throw first.error;
}
