/**
 * One walk's hold on its stream, from the lease it takes to the outcome it leaves: every walk (by
 * page number, by key, a backfill in lanes) takes, renews and releases its lease here, as BullMQ's
 * lock manager does for its jobs. The lease is renewed once a third of it has passed, after the
 * commits in flight (they write under it, and a commit checks the fencing number it was given),
 * and callers renewing at once share one renewal.
 */
import type { StreamSpec } from '../domain/stream-key.js';
import type { ReleaseOutcome, StreamLease, StreamState, SyncStore } from './ports/sync-store.js';
import { errorText, type SyncLogger } from './sync-logger.js';

/** A stream held by one walk. */
export interface StreamSession {
  /** The stream's state as the lease found it. */
  readonly state: StreamState;
  /** The lease as held now (a renewal replaces it). */
  lease(): StreamLease;
  /** Whether a third of the lease has passed since it was taken or renewed. */
  due(): boolean;
  /** Renews the lease when due, after `settled` (the commits in flight); one renewal for callers at once. */
  renew(settled?: () => Promise<unknown>): Promise<void>;
  /**
   * Releases the stream: after a walk that ended (`{ finished }`: stopped by the signal when it
   * did not finish and the signal aborted, else ok; a failed release throws), or one that failed
   * (`{ error }`: its text, or stopped when the signal aborted; a failed release is logged, never
   * thrown over the walk's own error). Only the first call releases.
   */
  end(ending: { finished: boolean } | { error: unknown }): Promise<void>;
}

/** What {@link openStreamSession} needs. */
export interface StreamSessionInput {
  store: Pick<SyncStore, 'acquireStream' | 'releaseStream'>;
  spec: StreamSpec;
  owner: string;
  leaseMs: number;
  signal?: AbortSignal | undefined;
  logger: SyncLogger;
  /** Clock of the renewals. Default `Date.now`. */
  now?: (() => number) | undefined;
}

/** Takes the stream's lease (throws `LeaseLostError` while another owner holds it). */
export async function openStreamSession(input: StreamSessionInput): Promise<StreamSession> {
  const { store, spec, owner, leaseMs, signal, logger } = input;
  const now = input.now ?? Date.now;
  const acquired = await store.acquireStream(spec, owner, leaseMs);
  let lease = acquired.lease;
  let takenAt = now();
  let renewing: Promise<void> | undefined;
  // Ended once: a second end (a failure thrown past a check that released it) asks nothing.
  let ended = false;
  const due = () => now() - takenAt > leaseMs / 3;
  return {
    state: acquired.state,
    lease: () => lease,
    due,
    async renew(settled) {
      if (!due()) return;
      renewing ??= (async () => {
        try {
          await settled?.();
          lease = (await store.acquireStream(spec, owner, leaseMs)).lease;
          takenAt = now();
        } finally {
          renewing = undefined;
        }
      })();
      await renewing;
    },
    async end(ending) {
      if (ended) return;
      ended = true;
      if ('finished' in ending) {
        const stopped = !ending.finished && signal?.aborted === true;
        await store.releaseStream(lease, stopped ? stoppedOutcome(signal) : { ok: true });
        return;
      }
      const outcome: ReleaseOutcome = signal?.aborted
        ? stoppedOutcome(signal)
        : { ok: false, error: errorText(ending.error) };
      await store.releaseStream(lease, outcome).catch((error: unknown) => {
        logger.warn({ stream: lease.key, err: errorText(error) }, 'could not release the stream lease');
      });
    },
  };
}

/** A walk ended by its signal (SIGTERM, SIGINT, a worker closing): not a failure of the stream. */
function stoppedOutcome(signal: AbortSignal | undefined): ReleaseOutcome {
  return { ok: false, stopped: true, error: `stopped by ${errorText(signal?.reason)}` };
}
