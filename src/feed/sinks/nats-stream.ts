/**
 * The JetStream stream that keeps the change feed's messages: created when missing, checked when
 * it exists. An existing stream's configuration is never changed: one that does not capture the
 * feed's subjects is refused with what to do, one with a shorter duplicate window is used with a
 * warning.
 */
import {
  DiscardPolicy,
  JetStreamApiCodes,
  JetStreamApiError,
  type JetStreamManager,
  RetentionPolicy,
  StorageType,
  type StreamInfo,
} from '@nats-io/jetstream';
import type { Logger } from '../../logger.js';
import { capturesFeed, feedSubjects } from './nats-subjects.js';
import { SinkDeliveryError } from './sink-target.js';

/** JetStream's error codes for a create that cannot be (not among the client's named codes). */
const STREAM_NAME_IN_USE = 10058;
const SUBJECTS_OVERLAP = 10065;

/** The stream the feed needs. */
export interface FeedStreamSpec {
  /** Its name (`LEDGER_NATS_STREAM`). */
  stream: string;
  /** The subject prefix (`LEDGER_NATS_SUBJECT`): the stream must capture `<prefix>.>`. */
  prefix: string;
  /** The duplicate window of a stream created here (`LEDGER_NATS_DUPLICATE_WINDOW`). */
  duplicateWindowMs: number;
  /** How long a stream created here keeps messages: the feed's own retention (`LEDGER_FEED_RETENTION`). */
  maxAgeMs: number;
}

/** What the feed's messages are stored in, once {@link ensureFeedStream} returned. */
export interface FeedStream {
  /** Whether this call created it. */
  created: boolean;
  /** Its duplicate window, ms: a message published again within it is stored once. */
  duplicateWindowMs: number;
}

const NANOS_PER_MS = 1_000_000;

/**
 * Makes sure `spec.stream` exists and captures `<prefix>.>`: creates it when missing (file
 * storage, limits retention, the spec's duplicate window and age); else checks it. Throws a
 * {@link SinkDeliveryError}, not retryable, when the stream exists without capturing the
 * subjects or another stream already captures them; lets the client's errors through otherwise.
 */
export async function ensureFeedStream(
  jsm: JetStreamManager,
  spec: FeedStreamSpec,
  logger: Logger,
): Promise<FeedStream> {
  let info = await streamInfo(jsm, spec.stream);
  if (info === undefined) {
    try {
      info = await jsm.streams.add({
        name: spec.stream,
        description: 'The change feed of ledger-indexer: one message per event, Nats-Msg-Id its position',
        subjects: [feedSubjects(spec.prefix)],
        storage: StorageType.File,
        retention: RetentionPolicy.Limits,
        discard: DiscardPolicy.Old,
        duplicate_window: spec.duplicateWindowMs * NANOS_PER_MS,
        max_age: spec.maxAgeMs * NANOS_PER_MS,
      });
      logger.info(
        { stream: spec.stream, subjects: info.config.subjects, duplicate_window_ms: spec.duplicateWindowMs },
        'created the NATS stream of the change feed',
      );
      return { created: true, duplicateWindowMs: spec.duplicateWindowMs };
    } catch (error) {
      // Another process created it meanwhile (with another configuration): check that one.
      if (!(error instanceof JetStreamApiError && error.code === STREAM_NAME_IN_USE)) {
        throw await createFailure(jsm, spec, error);
      }
      info = await jsm.streams.info(spec.stream);
    }
  }
  return checkedStream(info, spec, logger);
}

/** The stream's information, or undefined when there is no such stream. */
async function streamInfo(jsm: JetStreamManager, stream: string): Promise<StreamInfo | undefined> {
  try {
    return await jsm.streams.info(stream);
  } catch (error) {
    if (error instanceof JetStreamApiError && error.code === JetStreamApiCodes.StreamNotFound)
      return undefined;
    throw error;
  }
}

/** An existing stream as the feed can use it, or the error that says why it cannot. */
function checkedStream(info: StreamInfo, spec: FeedStreamSpec, logger: Logger): FeedStream {
  const subjects = info.config.subjects ?? [];
  if (!capturesFeed(subjects, spec.prefix)) {
    throw new SinkDeliveryError(
      `NATS stream ${spec.stream} exists with subjects ${JSON.stringify(subjects)}, which do not capture ` +
        `${feedSubjects(spec.prefix)}: add that subject to it (nats stream edit ${spec.stream} --subjects …), ` +
        'or set LEDGER_NATS_STREAM or LEDGER_NATS_SUBJECT to another stream or prefix; the indexer does not change it',
      { retryable: false },
    );
  }
  const duplicateWindowMs = Math.floor((info.config.duplicate_window ?? 0) / NANOS_PER_MS);
  if (duplicateWindowMs < spec.duplicateWindowMs) {
    logger.warn(
      { stream: spec.stream, duplicate_window_ms: duplicateWindowMs, wanted_ms: spec.duplicateWindowMs },
      'the NATS stream of the change feed keeps a shorter duplicate window than LEDGER_NATS_DUPLICATE_WINDOW: ' +
        'a replay after a longer stop may be stored twice (the indexer does not change an existing stream)',
    );
  }
  return { created: false, duplicateWindowMs };
}

/** Why the stream could not be created, naming the stream that holds the subjects when that is why. */
async function createFailure(jsm: JetStreamManager, spec: FeedStreamSpec, error: unknown): Promise<unknown> {
  if (!(error instanceof JetStreamApiError)) return error;
  if (error.code === SUBJECTS_OVERLAP) {
    const holder = await jsm.streams.find(feedSubjects(spec.prefix)).catch(() => 'another stream');
    return new SinkDeliveryError(
      `NATS stream ${spec.stream} cannot be created: ${holder} already captures subjects under ` +
        `${feedSubjects(spec.prefix)}; set LEDGER_NATS_STREAM to that stream or LEDGER_NATS_SUBJECT to another prefix`,
      { retryable: false, cause: error },
    );
  }
  return new SinkDeliveryError(`NATS stream ${spec.stream} cannot be created: ${error.message}`, {
    retryable: error.status >= 500,
    cause: error,
  });
}
