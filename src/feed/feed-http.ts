/**
 * `GET /feed` over `node:http`: a stream of Server-Sent Events (`id:` = position, resumed with
 * `Last-Event-ID`), or one long-poll JSON answer (`?after=P&wait=20s`). Both 410 when the start
 * is older than the retention, with the position to start again from.
 */

import { once } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { deadline } from '../abort.js';
import type { Logger } from '../logger.js';
import type { FeedConsumers } from './feed-consumers.js';
import { type FeedEvent, type FeedFilter, matchesFilter } from './feed-event.js';
import type { FeedHub } from './feed-hub.js';
import { type FeedRequest, FeedRequestError, type FeedStart, parseFeedRequest } from './feed-query.js';

/** Limits of the feed's HTTP side. */
export interface FeedHttpLimits {
  /** Bytes an SSE client may leave unread before it is cut off (it resumes from its last id). */
  maxBufferedBytes: number;
  /** SSE clients at once; past it, 503. */
  maxClients: number;
  /** How often an idle SSE stream gets a comment, so proxies and clients know it lives. */
  keepAliveMs: number;
  /** How long a client catching up may leave a full buffer unread before it is cut off. */
  drainMs: number;
}

export const DEFAULT_FEED_HTTP_LIMITS: FeedHttpLimits = {
  maxBufferedBytes: 1024 * 1024,
  maxClients: 4096,
  keepAliveMs: 15_000,
  drainMs: 60_000,
};

/** Events of a page an SSE client reads while it catches up. */
export const CATCH_UP_BATCH = 500;

/** Answers `GET /feed` from `hub`. */
export function createFeedHandler(input: {
  hub: FeedHub;
  consumers: FeedConsumers;
  logger: Logger;
  limits?: Partial<FeedHttpLimits>;
}) {
  const limits = { ...DEFAULT_FEED_HTTP_LIMITS, ...input.limits };
  const { hub, logger, consumers } = input;
  let clients = 0;
  return async (request: IncomingMessage, response: ServerResponse): Promise<void> => {
    let parsed: FeedRequest;
    try {
      parsed = parseFeedRequest({
        query: new URL(request.url ?? '/', 'http://feed').searchParams,
        accept: request.headers.accept,
        lastEventId: header(request, 'last-event-id'),
      });
    } catch (error) {
      if (!(error instanceof FeedRequestError)) throw error;
      return json(response, 400, { error: error.message });
    }
    const remote = request.socket.remoteAddress ?? 'unknown';
    if (parsed.mode === 'poll') {
      const { consumer: name } = parsed;
      const answered =
        name === null
          ? undefined
          : consumers.polled({
              name,
              remote,
              filter: parsed.filter,
              position: startPosition(hub, parsed.start),
            });
      try {
        return await longPoll(hub, parsed, response, consumers);
      } finally {
        answered?.();
      }
    }
    if (clients >= limits.maxClients) return json(response, 503, { error: 'too many feed clients' });
    clients += 1;
    const position = startPosition(hub, parsed.start);
    const entry = consumers.stream({ name: parsed.consumer, remote, filter: parsed.filter, position });
    try {
      await streamEvents({
        hub,
        logger,
        limits,
        start: { after: position },
        filter: parsed.filter,
        response,
        sent: (events, at) => {
          entry.advance(at);
          consumers.sent(events);
        },
        cutOff: () => consumers.cutOff(),
      });
    } finally {
      entry.end();
      clients -= 1;
    }
  };
}

async function longPoll(
  hub: FeedHub,
  parsed: Extract<FeedRequest, { mode: 'poll' }>,
  response: ServerResponse,
  consumers: FeedConsumers,
): Promise<void> {
  const gone = abortOnClose(response);
  const deadline = Date.now() + parsed.waitMs;
  let after = startPosition(hub, parsed.start);
  for (;;) {
    const page = await hub.readPage(after, parsed.limit);
    if (page.kind === 'gone') return goneReply(response, page.horizon);
    const events = page.events.filter((e) => matchesFilter(e, parsed.filter));
    after = page.position;
    const left = deadline - Date.now();
    if (events.length > 0 || left <= 0 || gone.aborted) {
      consumers.sent(events.length);
      return json(response, 200, { events, position: after, head: page.head });
    }
    // Nothing passed the filter, or nothing yet: go on past what was read, or wait for more.
    if (page.events.length === 0) await hub.waitBeyond(after, left, gone);
  }
}

/** What a stream reports as it goes: events written up to a position, a cut-off. */
interface StreamReports {
  sent(events: number, position: number): void;
  cutOff(): void;
}

async function streamEvents(
  input: {
    hub: FeedHub;
    logger: Logger;
    limits: FeedHttpLimits;
    start: FeedStart;
    filter: FeedFilter;
    response: ServerResponse;
  } & StreamReports,
): Promise<void> {
  const { hub, limits, filter, response } = input;
  const closed = abortOnClose(response);
  let position = startPosition(hub, input.start);
  // The first page before the headers: a start older than the retention answers 410.
  let page = await hub.readPage(position, CATCH_UP_BATCH);
  if (page.kind === 'gone') return goneReply(response, page.horizon);
  response.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
  });
  response.write(': ledger-indexer feed\nretry: 1000\n\n');
  // Catching up: pages read at the client's pace (it is waited for while its buffer is full).
  for (;;) {
    if (page.kind === 'gone') return void response.destroy();
    const passed = page.events.filter((e) => matchesFilter(e, filter));
    response.write(frames(passed, page.position, position));
    position = page.position;
    input.sent(passed.length, position);
    if (closed.aborted) return;
    if (page.events.length < CATCH_UP_BATCH && position >= hub.head()) break;
    if (response.writableLength > limits.maxBufferedBytes && !(await drained(response, limits, closed))) {
      input.logger.warn({ position, buffered_bytes: response.writableLength }, 'feed: slow client cut off');
      input.cutOff();
      return void response.destroy();
    }
    if (closed.aborted) return;
    page = await hub.readPage(position, CATCH_UP_BATCH);
  }
  await followLive({ ...input, closed, position });
}

/** Whether a client reads what it was sent within {@link FeedHttpLimits.drainMs} (or goes away). */
async function drained(
  response: ServerResponse,
  limits: FeedHttpLimits,
  closed: AbortSignal,
): Promise<boolean> {
  const bounded = deadline(limits.drainMs, closed);
  try {
    await once(response, 'drain', { signal: bounded.signal });
    return true;
  } catch {
    // Cut short by the deadline, not by the client going away (nor by an error of the socket).
    return !bounded.signal.aborted || closed.aborted;
  } finally {
    bounded.clear();
  }
}

/** Live: the hub hands every new stretch; a client that does not keep up is cut off. */
async function followLive(
  input: {
    hub: FeedHub;
    logger: Logger;
    limits: FeedHttpLimits;
    filter: FeedFilter;
    response: ServerResponse;
    closed: AbortSignal;
    position: number;
  } & StreamReports,
): Promise<void> {
  const { hub, logger, limits, response, closed } = input;
  let sent = input.position;
  const unsubscribe = hub.subscribe({
    position: input.position,
    filter: input.filter,
    deliver(events, position) {
      if (response.destroyed) return;
      response.write(frames(events, position, sent));
      sent = position;
      input.sent(events.length, position);
      if (response.writableLength > limits.maxBufferedBytes) {
        logger.warn({ position: sent, buffered_bytes: response.writableLength }, 'feed: slow client cut off');
        input.cutOff();
        unsubscribe();
        response.destroy();
      }
    },
    lost() {
      response.destroy();
    },
  });
  const keepAlive = setInterval(() => response.write(': keep-alive\n\n'), limits.keepAliveMs);
  try {
    await new Promise<void>((resolve) => {
      if (closed.aborted) resolve();
      closed.addEventListener('abort', () => resolve(), { once: true });
    });
  } finally {
    clearInterval(keepAlive);
    unsubscribe();
  }
}

/**
 * Events as SSE frames. A stretch whose end is past its last event passed on (the filter left
 * some out) ends with an `id:` alone: no event for the client, but its `Last-Event-ID` moves on.
 */
export function frames(events: readonly FeedEvent[], end: number, from: number): string {
  let text = '';
  for (const event of events) text += frameOf(event);
  const last = events.at(-1)?.position ?? from;
  if (end > last) text += `id: ${end}\n\n`;
  return text;
}

/**
 * An event's frame, made once: the live readers of a process are handed the same event objects,
 * and a thousand of them would otherwise serialize each event a thousand times.
 */
const madeFrames = new WeakMap<FeedEvent, string>();
function frameOf(event: FeedEvent): string {
  let frame = madeFrames.get(event);
  if (frame === undefined) {
    frame = `id: ${event.position}\ndata: ${JSON.stringify(event)}\n\n`;
    madeFrames.set(event, frame);
  }
  return frame;
}

function startPosition(hub: FeedHub, start: FeedStart): number {
  return 'after' in start ? start.after : hub.head();
}

function goneReply(response: ServerResponse, horizon: number): void {
  json(response, 410, {
    error: 'the feed no longer holds the events after this position (older than the retention)',
    oldest: horizon + 1,
    after: horizon,
  });
}

function json(response: ServerResponse, status: number, value: unknown): void {
  const body = `${JSON.stringify(value)}\n`;
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'cache-control': 'no-store',
    'content-length': Buffer.byteLength(body),
  });
  response.end(body);
}

function header(request: IncomingMessage, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Aborted when the connection closes (the client went away) or the answer ends. The response's
 * `close`, not the request's: a request's fires once its (empty) body is read.
 */
function abortOnClose(response: ServerResponse): AbortSignal {
  const controller = new AbortController();
  response.once('close', () => controller.abort());
  return controller.signal;
}
