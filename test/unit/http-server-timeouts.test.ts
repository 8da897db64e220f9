import assert from 'node:assert/strict';
import { once } from 'node:events';
import { connect } from 'node:net';
import { after, before, describe, it } from 'node:test';
import {
  HEADERS_TIMEOUT_MS,
  type HttpSurface,
  jsonReply,
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
});
