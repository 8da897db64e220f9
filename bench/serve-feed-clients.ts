/**
 * Clients of the change feed as its users hold them: `GET /feed` as Server-Sent Events from the
 * head (`after=now`), one connection each, every event's position noted with the moment its
 * bytes reached the client. And the bench's own clock of commits: a listener on the channel the
 * feed's triggers notify when a writing transaction commits.
 */
import { Agent, get } from 'node:http';
import pg from 'pg';

/** What one client received. */
export interface ClientLog {
  /** Positions of the events received, in order, and when each arrived (`performance.now()`). */
  positions: number[];
  times: number[];
  /** The last `id:` received (an event's, or one alone after events left out); 0 before any. */
  lastId: number;
  /** Why the stream failed or ended early; null while it runs. */
  failed: string | null;
}

/** SSE clients connected to one `/feed`. */
export interface FeedClients {
  logs: readonly ClientLog[];
  /** Ends every stream. */
  close(): void;
}

/** Clients connected at once: a thousand SYNs together overflow a listen backlog (511). */
const CONNECT_BATCH = 100;

/**
 * Opens `count` SSE streams of `origin/feed?after=now`, a batch at a time, and resolves once
 * every one has its headers and the stream's first comment (it then follows the live events).
 */
export async function openFeedClients(input: {
  origin: string;
  count: number;
  timeoutMs: number;
}): Promise<FeedClients> {
  const agent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const logs: ClientLog[] = [];
  const requests: Array<ReturnType<typeof get>> = [];
  const close = () => {
    for (const request of requests) request.destroy();
    agent.destroy();
  };
  try {
    for (let first = 0; first < input.count; first += CONNECT_BATCH) {
      const batch: Promise<void>[] = [];
      for (let i = first; i < Math.min(input.count, first + CONNECT_BATCH); i++) {
        const log: ClientLog = { positions: [], times: [], lastId: 0, failed: null };
        logs.push(log);
        batch.push(
          new Promise((resolve, reject) => {
            requests.push(openStream({ url: `${input.origin}/feed?after=now`, agent, log, resolve, reject }));
          }),
        );
      }
      await withTimeout(Promise.all(batch), input.timeoutMs, `feed clients ${first}+ did not connect`);
    }
  } catch (error) {
    close();
    throw error;
  }
  return { logs, close };
}

function openStream(input: {
  url: string;
  agent: Agent;
  log: ClientLog;
  resolve(): void;
  reject(error: Error): void;
}): ReturnType<typeof get> {
  const { log } = input;
  let connected = false;
  const request = get(
    input.url,
    { agent: input.agent, headers: { accept: 'text/event-stream' } },
    (response) => {
      if (response.statusCode !== 200) {
        log.failed = `HTTP ${response.statusCode}`;
        response.resume();
        input.reject(new Error(`feed answered ${response.statusCode}`));
        return;
      }
      response.setEncoding('utf8');
      let buffer = '';
      response.on('data', (chunk: string) => {
        const at = performance.now();
        buffer += chunk;
        let end = buffer.indexOf('\n\n');
        let start = 0;
        while (end >= 0) {
          readFrame(buffer.slice(start, end), at, log);
          start = end + 2;
          end = buffer.indexOf('\n\n', start);
        }
        buffer = buffer.slice(start);
        if (!connected) {
          connected = true;
          input.resolve();
        }
      });
      response.on('close', () => {
        log.failed ??= 'the stream ended';
      });
    },
  );
  request.on('error', (error) => {
    log.failed ??= error.message;
    if (!connected) input.reject(error);
  });
  return request;
}

/** One SSE frame: `id:` moves the client's position; with `data:` it is an event received at `at`. */
function readFrame(frame: string, at: number, log: ClientLog): void {
  let id: number | null = null;
  let data = false;
  for (const line of frame.split('\n')) {
    if (line.startsWith('id: ')) id = Number(line.slice(4));
    else if (line.startsWith('data: ')) data = true;
  }
  if (id === null) return;
  log.lastId = id;
  if (data) {
    log.positions.push(id);
    log.times.push(at);
  }
}

/** The bench's clock of commits: when each notification of a committed writing transaction arrived. */
export interface CommitClock {
  /** Arrival times (`performance.now()`), in order. */
  times: number[];
  close(): Promise<void>;
}

/** The application name of the clock's connection, told apart from the process measured. */
export const COMMIT_CLOCK_NAME = 'ledger-bench-commit-clock';

/**
 * Listens on `ledger_feed_commit`, which the feed's triggers notify once per transaction that
 * wrote events, delivered by PostgreSQL at its commit to every listener at once (the serve
 * process's listener hears the same notification at the same moment).
 */
export async function startCommitClock(databaseUrl: string): Promise<CommitClock> {
  const client = new pg.Client({ connectionString: databaseUrl, application_name: COMMIT_CLOCK_NAME });
  const times: number[] = [];
  client.on('error', () => undefined);
  client.on('notification', (message) => {
    if (message.channel === 'ledger_feed_commit') times.push(performance.now());
  });
  await client.connect();
  await client.query('LISTEN ledger_feed_commit');
  return { times, close: () => client.end() };
}

async function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} within ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
