/**
 * The serve scenario's ceiling: a process of its own answering every request with one stored
 * answer, unchanged (no database, no rendering): what the load generator, the loopback and the
 * machine allow at the same answer size. `node --import tsx answer-server-child.ts <list file>
 * <look-up file>`: `/list` answers the first file, `/lookup` the second; prints `listening <url>`.
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const [listFile, lookupFile] = process.argv.slice(2);
if (!listFile || !lookupFile) {
  console.error('usage: answer-server-child <list file> <look-up file>');
  process.exit(2);
}
const answers = new Map([
  ['/list', readFileSync(listFile)],
  ['/lookup', readFileSync(lookupFile)],
]);
const server = createServer((request, response) => {
  const body = answers.get(request.url ?? '');
  if (body === undefined) {
    response.writeHead(404).end();
    return;
  }
  response.writeHead(200, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': body.length,
  });
  response.end(body);
});
server.listen(0, '127.0.0.1', () => {
  const { port } = server.address() as AddressInfo;
  process.stdout.write(`listening http://127.0.0.1:${port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
