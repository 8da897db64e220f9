/**
 * A feed consumer as a user would write one, run as a process of its own so a test can kill it
 * anywhere: it keeps its position in the same file as what it received (one line an event,
 * `position rawId kind`, appended as each arrives), and at start resumes from the last whole line
 * with `Last-Event-ID`.
 *
 *   node --import tsx test/helpers/feed-consumer-process.ts <feed URL> <file>
 */
import { appendFileSync, existsSync, readFileSync } from 'node:fs';
import { openSse } from './feed.js';

const [url, file] = process.argv.slice(2);
if (url === undefined || file === undefined)
  throw new Error('usage: feed-consumer-process <feed URL> <file>');

/** The position of the last whole line: where the consumer stands. */
function storedPosition(path: string): string | undefined {
  if (!existsSync(path)) return undefined;
  const lines = readFileSync(path, 'utf8').split('\n');
  // A line cut by a kill has no newline after it: it is not counted, and is received again.
  const whole = lines.slice(0, -1).filter((line) => line !== '');
  return whole.at(-1)?.split(' ')[0];
}

const position = storedPosition(file);
const reader = await openSse(url, position === undefined ? {} : { lastEventId: position });
let written = 0;
const drain = setInterval(() => {
  for (; written < reader.events.length; written++) {
    const event = reader.events[written]!;
    appendFileSync(file, `${event.position} ${event.rawId} ${event.kind}\n`);
  }
}, 5);
await reader.ended;
clearInterval(drain);
