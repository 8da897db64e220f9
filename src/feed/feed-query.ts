/** What a request of `GET /feed` asks for, parsed from its query and headers: pure. */
import { FEED_START, type FeedFilter } from './feed-event.js';

/** A bad parameter of `GET /feed`: answered 400 with its message. */
export class FeedRequestError extends Error {
  override readonly name = 'FeedRequestError';
  constructor(
    readonly parameter: string,
    problem: string,
  ) {
    super(`${parameter} ${problem}`);
  }
}

/** The longest `wait` of a long poll: proxies often cut idle answers at a minute. */
export const MAX_WAIT_MS = 60_000;
/** Events of one long-poll answer by default, and at most. */
export const LIMITS = { defaultLimit: 100, maxLimit: 1000 } as const;

/** Where a reader starts: after a position, or at the head (only what comes next). */
export type FeedStart = { after: number } | { atHead: true };

/** A request of `GET /feed`: a stream of Server-Sent Events, or one long-poll JSON answer. */
export type FeedRequest = { start: FeedStart; filter: FeedFilter; consumer: string | null } & (
  | { mode: 'sse' }
  | { mode: 'poll'; waitMs: number; limit: number }
);

/**
 * Parses a request: SSE when it accepts `text/event-stream`, else a long poll. The start is
 * `Last-Event-ID` (an SSE client resuming), else `after` (a position, or `now` for the head),
 * else the beginning. `consumer` names the reader on the status page. Throws {@link FeedRequestError}.
 */
export function parseFeedRequest(input: {
  query: URLSearchParams;
  accept: string | undefined;
  lastEventId: string | undefined;
}): FeedRequest {
  const { query } = input;
  const filter: FeedFilter = {
    account: text(query, 'account'),
    tokenTag: text(query, 'tokenTag'),
    action: text(query, 'action'),
  };
  const resume = input.lastEventId?.trim();
  const start =
    resume !== undefined && resume !== ''
      ? { after: position(resume, 'Last-Event-ID') }
      : startOf(query.get('after'));
  const consumer = consumerName(query.get('consumer'));
  if (input.accept?.includes('text/event-stream')) return { mode: 'sse', start, filter, consumer };
  const waitMs = query.has('wait') ? duration(query.get('wait') ?? '', 'wait') : 0;
  if (waitMs > MAX_WAIT_MS) throw new FeedRequestError('wait', `must be at most ${MAX_WAIT_MS / 1000}s`);
  const limit = query.has('limit') ? whole(query.get('limit') ?? '', 'limit') : LIMITS.defaultLimit;
  if (limit < 1 || limit > LIMITS.maxLimit) {
    throw new FeedRequestError('limit', `must be from 1 to ${LIMITS.maxLimit}`);
  }
  return { mode: 'poll', start, filter, consumer, waitMs, limit };
}

/** `?consumer=`: the name a reader goes by on the status page, 1 to 64 letters, digits, `.`, `_` or `-`. */
function consumerName(value: string | null): string | null {
  if (value === null || value === '') return null;
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(value)) {
    throw new FeedRequestError('consumer', 'must be 1 to 64 letters, digits, ".", "_" or "-"');
  }
  return value;
}

function startOf(after: string | null): FeedStart {
  if (after === null || after === '') return { after: FEED_START };
  if (after === 'now') return { atHead: true };
  return { after: position(after, 'after') };
}

function position(value: string, parameter: string): number {
  return whole(value, parameter);
}

function whole(value: string, parameter: string): number {
  const parsed = /^\d{1,16}$/.test(value) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(parsed))
    throw new FeedRequestError(parameter, `must be a whole number (got '${value.slice(0, 40)}')`);
  return parsed;
}

function text(query: URLSearchParams, parameter: string): string | undefined {
  const value = query.get(parameter);
  if (value === null || value === '') return undefined;
  if (value.length > 200) throw new FeedRequestError(parameter, 'must be at most 200 characters');
  return value;
}

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * A duration written `<number><unit>` with unit `ms`, `s`, `m`, `h` or `d` (`20s`, `7d`), in ms;
 * a bare number is seconds. Throws {@link FeedRequestError} naming `parameter`.
 */
export function duration(value: string, parameter: string): number {
  const match = /^(\d{1,9})(ms|s|m|h|d)?$/.exec(value.trim());
  if (match === null) {
    throw new FeedRequestError(
      parameter,
      `must be a duration like 20s, 5m, 12h or 7d (got '${value.slice(0, 40)}')`,
    );
  }
  return Number(match[1]) * (UNITS[match[2] ?? 's'] ?? 1000);
}
