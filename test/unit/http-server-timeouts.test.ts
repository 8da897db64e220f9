import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  HEADERS_TIMEOUT_MS,
  type HttpSurface,
  jsonReply,
  MAX_CONNECTIONS,
  type Routes,
  startHttpSurface,
} from '../../src/http/server.js';
import { createLogger } from '../../src/logger.js';

const ok = async () => jsonReply(200, { ok: true });
const routes: Routes = { page: ok, health: ok, ready: ok, status: ok, metrics: ok };

let surface: HttpSurface;

before(async () => {
  surface = await startHttpSurface({
    host: '127.0.0.1',
    port: 0,
    routes,
    logger: createLogger({ level: 'silent' }),
  });
});

after(async () => {
  await surface.close();
});

describe('the HTTP surface and slow clients', () => {
  it('cuts a client that trickles its headers one byte a second at about the headers timeout', async () => {
    assert.equal(HEADERS_TIMEOUT_MS, 10_000);
    const socket = connect({ host: '127.0.0.1', port: surface.port });
    await once(socket, 'connect');
    const started = Date.now();
    const request = 'GET /health HTTP/1.1\r\nHost: x\r\nX-Slow: ' + 'a'.repeat(100);
    let sent = 0;
    const trickle = setInterval(() => {
      if (!socket.destroyed && sent < request.length) socket.write(request[sent++] ?? 'a');
    }, 1000);
    let answer = '';
    socket.on('data', (chunk: Buffer) => {
      answer += chunk.toString();
    });
    socket.on('error', () => undefined);
    try {
      const closedAfter = await Promise.race([
        once(socket, 'close').then(() => Date.now() - started),
        new Promise<number>((resolve) => setTimeout(() => resolve(Number.POSITIVE_INFINITY), 20_000).unref()),
      ]);
      assert.ok(
        closedAfter >= HEADERS_TIMEOUT_MS - 1000 && closedAfter <= HEADERS_TIMEOUT_MS + 2500,
        `closed after ${closedAfter} ms`,
      );
      assert.match(answer, /^HTTP\/1\.1 408/);
    } finally {
      clearInterval(trickle);
      socket.destroy();
    }
  });

  it('lets go connections that never send a byte at the headers timeout, and holds no more than its cap', async () => {
    const opened = Date.now();
    const sockets = await Promise.all(
      Array.from({ length: MAX_CONNECTIONS + 20 }, async () => {
        const socket = connect({ host: '127.0.0.1', port: surface.port });
        socket.on('error', () => undefined);
        const closed = once(socket, 'close').then(() => Date.now() - opened);
        await once(socket, 'connect');
        return closed;
      }),
    );
    const closedAfter = await Promise.race([
      Promise.all(sockets),
      new Promise<null>((resolve) => setTimeout(() => resolve(null), HEADERS_TIMEOUT_MS + 5000).unref()),
    ]);
    assert.ok(closedAfter !== null, 'every idle connection closed');
    const early = closedAfter.filter((ms) => ms < HEADERS_TIMEOUT_MS / 2).length;
    assert.ok(early >= 20, `${early} connections past the cap closed at once`);
    const late = closedAfter.filter((ms) => ms >= HEADERS_TIMEOUT_MS - 1000);
    assert.ok(late.length >= MAX_CONNECTIONS - 5, `${late.length} idle ones held until the timeout`);
    assert.ok(
      Math.max(...late) <= HEADERS_TIMEOUT_MS + 2500,
      `the last closed after ${Math.max(...late)} ms`,
    );
    // The surface still answers.
    const answer = await fetch(`${surface.url}/health`);
    assert.equal(answer.status, 200);
  });
});
