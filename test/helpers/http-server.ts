/**
 * A scripted HTTP server on 127.0.0.1, port 0, for tests that need a real HTTP peer. It records
 * every request (with its arrival time and connection) and answers from a script: a function of
 * the request, or a list of replies served in turn from the moment it is set (the last one repeats).
 */
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A request as the server saw it. */
export interface RecordedRequest {
  method: string;
  /** The raw request target: path and query, still encoded. */
  url: string;
  /** The path, still encoded. */
  rawPath: string;
  /** The path, decoded segment by segment. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: string;
  /** `performance.now()` at arrival. */
  at: number;
  /** Which connection carried it: 0 for the first socket the server accepted, 1 for the next… */
  connection: number;
}

/** What to answer. */
export interface ScriptedReply {
  /** Default 200. */
  status?: number;
  headers?: Record<string, string>;
  /** A string is sent as is; anything else as JSON. Default empty. */
  body?: unknown;
  /** Wait this long before answering. */
  delayMs?: number;
  /** Never answer (until the client gives up or the server closes). */
  hang?: boolean;
  /** Cut the connection without answering. */
  destroy?: boolean;
  /**
   * Writes the answer itself (e.g. a body that trickles or never ends); it must stop writing
   * once the response closes. The server closes the response when the server closes.
   */
  respond?: (res: ServerResponse) => void;
}

export type ScriptHandler = (
  request: RecordedRequest,
  index: number,
) => ScriptedReply | Promise<ScriptedReply>;

/** A running test server. */
export interface TestHttpServer {
  /** `http://127.0.0.1:<port>` */
  baseUrl: string;
  port: number;
  /** Every request so far, in arrival order. */
  requests: RecordedRequest[];
  /** Connections accepted so far. */
  connectionCount(): number;
  /** Replaces the script (e.g. between phases of a test). */
  setScript(script: ScriptHandler | ScriptedReply[]): void;
  /** Closes every connection and the server. */
  close(): Promise<void>;
}

/** Starts a scripted server on 127.0.0.1 and an OS-chosen port. */
export async function startHttpServer(script: ScriptHandler | ScriptedReply[]): Promise<TestHttpServer> {
  let handler = toHandler(script);
  const requests: RecordedRequest[] = [];
  const sockets = new Map<Socket, number>();
  const hanging = new Set<ServerResponse>();
  let connections = 0;

  const server = createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const url = req.url ?? '/';
    const parsed = new URL(url, 'http://127.0.0.1');
    const recorded: RecordedRequest = {
      method: req.method ?? 'GET',
      url,
      rawPath: parsed.pathname,
      path: parsed.pathname
        .split('/')
        .map((segment) => decodeURIComponent(segment))
        .join('/'),
      query: parsed.searchParams,
      headers: req.headers,
      body: Buffer.concat(chunks).toString('utf8'),
      at: performance.now(),
      connection: sockets.get(req.socket) ?? -1,
    };
    const index = requests.push(recorded) - 1;
    let reply: ScriptedReply;
    try {
      reply = await handler(recorded, index);
    } catch (error) {
      reply = { status: 500, body: { error: `test script failed: ${String(error)}` } };
    }
    if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    if (reply.hang || reply.respond) {
      hanging.add(res);
      res.on('close', () => hanging.delete(res));
      reply.respond?.(res);
      return;
    }
    if (reply.destroy) {
      req.socket.destroy();
      return;
    }
    const body =
      reply.body === undefined
        ? ''
        : typeof reply.body === 'string'
          ? reply.body
          : JSON.stringify(reply.body);
    const isJson = reply.body !== undefined && typeof reply.body !== 'string';
    res.writeHead(reply.status ?? 200, {
      ...(isJson ? { 'content-type': 'application/json' } : {}),
      ...reply.headers,
      'content-length': Buffer.byteLength(body),
    });
    res.end(body);
  });
  server.on('connection', (socket) => {
    sockets.set(socket, connections);
    connections += 1;
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    baseUrl: `http://127.0.0.1:${port}`,
    port,
    requests,
    connectionCount: () => connections,
    setScript(next) {
      handler = toHandler(next);
    },
    async close() {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve, reject) =>
        server.close((error) => (error ? reject(error) : resolve())),
      );
    },
  };
}

function toHandler(script: ScriptHandler | ScriptedReply[]): ScriptHandler {
  if (typeof script === 'function') return script;
  if (script.length === 0) throw new Error('a reply list needs at least one reply');
  let served = 0;
  return () => script[Math.min(served++, script.length - 1)] ?? {};
}
