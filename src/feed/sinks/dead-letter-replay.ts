/**
 * Dead letters delivered again, by hand (`ledger-indexer dead-letters --replay`): each kept batch
 * goes to its sink's target as the runner sends a batch (the webhook signs it anew, NATS publishes
 * each event with its position as `Nats-Msg-Id`), and its row is deleted once the far side took
 * it. A stretch that expired before it was delivered has no body: its events are gone, and it
 * stays, said so. A batch the far side refuses again stays too, with why.
 */
import type { StoredDeadLetter } from '../../db/queries/sink-dead-letters.js';
import type { FeedEvent } from '../feed-event.js';
import type { SinkTarget } from './sink-target.js';

/**
 * What became of one dead letter: delivered (and deleted), kept because it could not be
 * (`kept`: refused again, or no such sink here), or kept because it has nothing to send.
 */
export type ReplayOutcome =
  | { id: number; sink: string; outcome: 'delivered'; events: number }
  | { id: number; sink: string; outcome: 'kept' | 'expired'; why: string };

/** The events of a dead letter's body (`{sink, first, last, events}`, as sent); `null` for one without a body. */
export function deadLetterEvents(letter: Pick<StoredDeadLetter, 'body'>): FeedEvent[] | null {
  if (letter.body === null) return null;
  const parsed = JSON.parse(letter.body) as { events?: unknown };
  if (!Array.isArray(parsed.events) || parsed.events.length === 0) return null;
  return parsed.events as FeedEvent[];
}

/**
 * Delivers each of `letters` again to the target of its sink, oldest first, deleting it once
 * delivered (`remove`); what became of each, in order.
 */
export async function replayDeadLetters(input: {
  letters: readonly StoredDeadLetter[];
  targets: ReadonlyMap<string, SinkTarget>;
  remove: (id: number) => Promise<void>;
}): Promise<ReplayOutcome[]> {
  const outcomes: ReplayOutcome[] = [];
  for (const letter of input.letters) {
    const { id, sink } = letter;
    const target = input.targets.get(sink);
    const events = deadLetterEvents(letter);
    if (events === null) {
      outcomes.push({
        id,
        sink,
        outcome: 'kept',
        why: 'expired before it was delivered: its events are gone',
      });
    } else if (target === undefined) {
      outcomes.push({ id, sink, outcome: 'kept', why: `sink ${sink} is not configured in this process` });
    } else {
      try {
        await target.deliver(events);
        await input.remove(id);
        outcomes.push({ id, sink, outcome: 'delivered', events: events.length });
      } catch (error) {
        outcomes.push({
          id,
          sink,
          outcome: 'kept',
          why: error instanceof Error ? error.message : String(error),
        });
      }
    }
  }
  return outcomes;
}
