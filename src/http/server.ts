import { once } from 'node:events';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ListenError } from '../errors.js';
import type { Logger } from '../logger.js';

/** An answer of one route. */
export interface Reply {
  status: number;
  contentType: string;
  /** The body's text, or its bytes (an answer written straight into them). */
  body: string | Buffer;
  /** Further response headers (lower-case names). */
  headers?: Record<string, string> | undefined;
}

/** A request for a path outside the surface's own, handed to {@link Routes.api}. */
export interface ApiRequest {
  method: string;
  path: string;
  params: URLSearchParams;
  /** The `Authorization` header as sent. */
  authorization: string | undefined;
}

/** What each path answers; the HTTP surface is handed these and knows nothing of the database. */
export interface Routes {
  /** The status page at `/` (HTML). */
  page(): Promise<Reply>;
  health(): Promise<Reply>;
  ready(): Promise<Reply>;
  status(): Promise<Reply>;
  metrics(): Promise<Reply>;
  /**
   * Any other path (the mirror's read API): its answer, or undefined when the path is not one it
   * serves (404).
   */
  api?: ((request: ApiRequest) => Promise<Reply> | undefined) | undefined;
  /**
   * `/feed`, the change feed: answers on the response itself (a stream of events, or a long
   * poll). Absent: `/feed` is 404.
   */
  feed?: ((request: IncomingMessage, response: ServerResponse) => Promise<void>) | undefined;
}

/** A listening HTTP surface. */
export interface HttpSurface {
  /** `http://host:port`, the port the system gave when 0 was asked for. */
  url: string;
  port: number;
  /** Stops listening and ends open connections (kept-alive scrapers included). */
  close(): Promise<void>;
}

/** A JSON reply, with a final newline like the command line's. */
export function jsonReply(status: number, value: unknown): Reply {
  return {
    status,
    contentType: 'application/json; charset=utf-8',
    body: `${JSON.stringify(value, null, 2)}\n`,
  };
}

/** A client that has not sent its whole request head within this is answered 408 and let go. */
export const HEADERS_TIMEOUT_MS = 10_000;

/** A request whose body has not arrived within this (headers included) is answered 408. */
export const REQUEST_TIMEOUT_MS = 30_000;

/**
 * Most connections open at once: the surface answers scrapers and a status page, a few at a
 * time; past this, a new connection is closed at once rather than held.
 */
export const MAX_CONNECTIONS = 256;

/**
 * How often Node checks the two timeouts above. Its default, 30 s, let a client trickling its
 * headers stay about 30 s whatever the timeout said; checked every second, it goes within about
 * a second of it.
 */
export const CONNECTIONS_CHECK_MS = 1_000;

const PATHS = ['/', '/health', '/ready', '/status', '/metrics'] as const;
type Path = (typeof PATHS)[number];
const FEED_PATH = '/feed';

/**
 * Serves `routes` on `host:port` with `node:http`: `GET` (and `HEAD`) of the five paths, any
 * other path to `routes.api` (the read API) when given, else 404, and 405 for any other method. A
 * route that throws answers 500 with one line; the failure is logged, never a request's headers.
 */
export async function startHttpSurface(input: {
  host: string;
  port: number;
  routes: Routes;
  logger: Logger;
  /** Connections open at once at most. Default {@link MAX_CONNECTIONS}; the feed's clients add theirs. */
  maxConnections?: number | undefined;
}): Promise<HttpSurface> {
  const { host, routes, logger } = input;
  // Scrapes are small: a client that sends nothing for long is let go.
  const timeouts = {
    headersTimeout: HEADERS_TIMEOUT_MS,
    requestTimeout: REQUEST_TIMEOUT_MS,
    connectionsCheckingInterval: CONNECTIONS_CHECK_MS,
  };
  const server = createServer(timeouts, (request, response) => {
    void answer(request, response, routes).catch((error: unknown) => {
      logger.error({ err: error, path: pathOf(request) }, 'http surface request failed');
      if (!response.headersSent) send(response, request, jsonReply(500, { error: firstLine(error) }));
      else response.destroy();
    });
  });
  server.maxConnections = input.maxConnections ?? MAX_CONNECTIONS;
  // Node times out requests begun, not a connection that never sends a byte: it is let go after
  // the headers timeout. Once a request begins, Node's own timeouts (and keep-alive's) apply.
  server.on('connection', (socket) => {
    socket.setTimeout(HEADERS_TIMEOUT_MS, () => socket.destroy());
    socket.once('data', () => socket.setTimeout(0));
  });
  server.listen({ host, port: input.port });
  try {
    await Promise.race([
      once(server, 'listening'),
      once(server, 'error').then(([error]) => Promise.reject(error)),
    ]);
  } catch (error) {
    const code = (error as { code?: unknown } | null)?.code;
    throw new ListenError({
      host,
      port: input.port,
      code: typeof code === 'string' ? code : undefined,
      cause: error,
    });
  }
  server.on('error', (error) => logger.error({ err: error }, 'http surface failed'));
  const { port } = server.address() as AddressInfo;
  const shownHost = host.includes(':') ? `[${host}]` : host;
  return {
    url: `http://${shownHost}:${port}`,
    port,
    async close() {
      const closed = once(server, 'close');
      server.close();
      server.closeAllConnections();
      await closed;
    },
  };
}

async function answer(request: IncomingMessage, response: ServerResponse, routes: Routes): Promise<void> {
  const path = pathOf(request);
  const feed = path === FEED_PATH ? routes.feed : undefined;
  if (!(PATHS as readonly string[]).includes(path) && feed === undefined) {
    const api = routes.api?.(apiRequest(request, path));
    const paths = routes.feed === undefined ? PATHS : [...PATHS, FEED_PATH];
    if (api !== undefined) send(response, request, await api);
    else send(response, request, jsonReply(404, { error: `no such path: ${path}`, paths }));
    return;
  }
  if (request.method !== 'GET' && (request.method !== 'HEAD' || feed !== undefined)) {
    response.setHeader('allow', feed === undefined ? 'GET, HEAD' : 'GET');
    send(response, request, jsonReply(405, { error: `method ${request.method} not allowed; use GET` }));
    return;
  }
  if (feed !== undefined) return feed(request, response);
  send(response, request, await route(path as Path, routes));
}

function route(path: Path, routes: Routes): Promise<Reply> {
  switch (path) {
    case '/':
      return routes.page();
    case '/health':
      return routes.health();
    case '/ready':
      return routes.ready();
    case '/status':
      return routes.status();
    case '/metrics':
      return routes.metrics();
  }
}

function apiRequest(request: IncomingMessage, path: string): ApiRequest {
  const url = request.url ?? '/';
  const query = url.indexOf('?');
  return {
    method: request.method ?? 'GET',
    path,
    params: new URLSearchParams(query < 0 ? '' : url.slice(query + 1)),
    authorization: request.headers.authorization,
  };
}

function send(response: ServerResponse, request: IncomingMessage, reply: Reply): void {
  response.statusCode = reply.status;
  for (const [name, value] of Object.entries(reply.headers ?? {})) response.setHeader(name, value);
  response.setHeader('content-type', reply.contentType);
  response.setHeader('cache-control', 'no-store');
  response.setHeader('content-length', Buffer.byteLength(reply.body));
  response.end(request.method === 'HEAD' ? undefined : reply.body);
}

function pathOf(request: IncomingMessage): string {
  const url = request.url ?? '/';
  const end = url.search(/[?#]/);
  return end === -1 ? url : url.slice(0, end);
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
