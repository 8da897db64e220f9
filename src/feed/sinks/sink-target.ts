/**
 * Where a sink delivers the change feed: the one thing a webhook and a broker have in common.
 * The sink runner reads the feed from the sink's own stored position, hands a target batches in
 * position order, and moves the position only after `deliver` resolved: at least once, never past
 * what the far side acknowledged (docs/design.md, "The change feed").
 */
import { LedgerIndexerError } from '../../errors.js';
import type { FeedEvent } from '../feed-event.js';

/** A destination of the feed. */
export interface SinkTarget {
  /** What kind of destination, for logs and the status page: `webhook`, `nats`. */
  readonly kind: string;
  /**
   * Delivers `events` (never empty, positions ascending, contiguous in the feed as the sink's
   * filter lets them through). Resolves once the far side has acknowledged all of them; throws a
   * {@link SinkDeliveryError} when it has not (then none of them count as delivered).
   */
  deliver(events: readonly FeedEvent[]): Promise<void>;
  /** Lets go of connections; a delivery in flight may fail. */
  close(): Promise<void>;
}

/**
 * A batch the far side did not acknowledge; `retryable` says whether trying again may help, and
 * `retryAfterMs` how long the far side asked to be left alone first (`Retry-After`), when it did.
 */
export class SinkDeliveryError extends LedgerIndexerError {
  readonly retryAfterMs: number | undefined;

  constructor(
    message: string,
    options: { retryable: boolean; cause?: unknown; retryAfterMs?: number | undefined },
  ) {
    super(message, options);
    this.retryAfterMs = options.retryAfterMs;
  }
}
