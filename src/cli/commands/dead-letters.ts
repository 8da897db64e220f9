import { UsageError } from '../../errors.js';
import { defineCommand } from '../define-command.js';

const usage = `Usage: ledger-indexer dead-letters [--sink NAME] [--id N] [--replay]

Lists the batches the change feed's sinks gave up on (feed_sink_dead_letters): each with its
sink, the positions it covers, its events, why and after how many tries. With --replay, delivers
each again to its sink as the sink delivers a batch (the webhook signs it anew; NATS publishes
each event with its position as Nats-Msg-Id), oldest first, and deletes it once the far side
took it; one the far side refuses again is kept, with why. A stretch that expired before it was
delivered has no events left to send and is kept. The sinks are the ones this process's
settings name (LEDGER_WEBHOOK_URL and LEDGER_WEBHOOK_SECRET, LEDGER_NATS_URL).

Options:
  --sink NAME   only this sink's (webhook, nats)
  --id N        only this dead letter
  --replay      deliver them again and delete those delivered

Exit codes: 0 listed, or every batch with events delivered; 1 a batch was refused again or the
database failed; 2 bad flags or settings.`;

export const command = defineCommand({
  name: 'dead-letters',
  usage,
  flags: { sink: { type: 'string' }, id: { type: 'string' }, replay: { type: 'boolean' } },
  async run({ values, io, config: loadConfig, logger: createLogger, onClose }) {
    const id = values.id === undefined ? undefined : Number(values.id);
    if (id !== undefined && !(Number.isSafeInteger(id) && id > 0)) {
      throw new UsageError(`--id must be a whole number above 0, got '${values.id}'`);
    }
    const config = loadConfig();
    const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
    const { openDatabase } = await import('../../db/connect.js');
    const { readDeadLetters, deleteDeadLetter } = await import('../../db/queries/sink-dead-letters.js');
    const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir, logger });
    onClose(() => database.close());
    const letters = (await readDeadLetters(database.db, { sink: values.sink, limit: 10_000 })).filter(
      (l) => id === undefined || l.id === id,
    );
    if (!values.replay) {
      io.stdout.write(
        letters.length === 0
          ? 'no dead letters\n'
          : `${letters
              .map(
                (l) =>
                  `#${l.id} ${l.sink} positions ${l.firstPosition}-${l.lastPosition} ${
                    l.events === null ? 'expired' : `${l.events} events`
                  } after ${l.attempts} tries, ${l.createdAt.toISOString()}: ${l.reason}`,
              )
              .join('\n')}\n`,
      );
      return 0;
    }
    const { configuredSinks } = await import('../../feed/sinks/configured-sinks.js');
    const { replayDeadLetters } = await import('../../feed/sinks/dead-letter-replay.js');
    const sinks = configuredSinks(config, logger);
    onClose(() => Promise.all(sinks.map((s) => s.target.close())));
    const outcomes = await replayDeadLetters({
      letters,
      targets: new Map(sinks.map((s) => [s.name, s.target])),
      remove: (letter) => deleteDeadLetter(database.db, letter),
    });
    for (const o of outcomes) {
      io.stdout.write(
        o.outcome === 'delivered'
          ? `#${o.id} ${o.sink}: delivered ${o.events} events, deleted\n`
          : `#${o.id} ${o.sink}: kept: ${o.why}\n`,
      );
    }
    if (outcomes.length === 0) io.stdout.write('no dead letters\n');
    return outcomes.some((o) => o.outcome === 'kept') ? 1 : 0;
  },
});
