/**
 * Misbehaving 200 answers for the scripted test server's `respond` hook: a body that trickles
 * in, and one that never ends. Each stops when the client goes away, and after a bounded
 * amount by itself.
 */
import type { ServerResponse } from 'node:http';

/** A 200 whose body comes one space every `everyMs`, for at most `maxBytes` bytes. */
export function trickleBody(everyMs: number, maxBytes = 240): (res: ServerResponse) => void {
  return (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.flushHeaders();
    let sent = 0;
    const timer = setInterval(() => {
      if (res.destroyed || sent >= maxBytes) {
        clearInterval(timer);
        res.end();
        return;
      }
      res.write(' ');
      sent += 1;
    }, everyMs);
    res.on('close', () => clearInterval(timer));
  };
}

/** A 200 whose body streams as fast as the client reads it, up to `maxBytes` (default 2 GiB). */
export function endlessBody(maxBytes = 2 * 1024 ** 3): (res: ServerResponse) => void {
  const chunk = Buffer.alloc(64 * 1024, 0x20);
  return (res) => {
    res.writeHead(200, { 'content-type': 'application/json' });
    let sent = 0;
    const pump = (): void => {
      while (!res.destroyed && sent < maxBytes) {
        sent += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      if (!res.destroyed) res.end();
    };
    pump();
  };
}
