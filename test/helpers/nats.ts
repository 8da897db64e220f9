/**
 * NATS in tests: the shared server (NATS_URL, default nats://127.0.0.1:4222), names no other test
 * file uses, a consumer that reads a stream back, and private servers a test may kill.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { JetStreamApiError, jetstream, jetstreamManager } from '@nats-io/jetstream';
import { connect, type NatsConnection } from '@nats-io/transport-node';
import { freePort } from './free-port.js';

/** The shared NATS of the test run (JetStream enabled). */
export const TEST_NATS_URL = process.env.NATS_URL ?? 'nats://127.0.0.1:4222';

/** A stream name and a subject prefix no other test file (or run) uses, so files can run in parallel. */
export function uniqueFeedNames(file: string): { stream: string; prefix: string } {
  const tag = `${file.replace(/[^A-Za-z0-9]/g, '_')}_${randomBytes(4).toString('hex')}`;
  return { stream: `TEST_${tag}`, prefix: `test.${tag}.feed` };
}

/** A connection to `url` (`nats://host:port`), for the test's own reading and cleaning. */
export function connectTo(url: string, options: { token?: string } = {}): Promise<NatsConnection> {
  return connect({ servers: url.replace(/^nats:\/\//, ''), ...options, timeout: 5000 });
}

/** One message of the stream as a consumer sees it. */
export interface ReadMessage {
  seq: number;
  subject: string;
  msgId: string | undefined;
  payload: string;
}

/**
 * Reads `stream` from its start with an ordered consumer (optionally only `filter`), until it
 * has read every message the stream holds (or `filter` lets through, when `expected` says how many).
 */
export async function readStream(
  nc: NatsConnection,
  stream: string,
  options: { filter?: string; expected?: number } = {},
): Promise<ReadMessage[]> {
  const jsm = await jetstreamManager(nc);
  const total = options.expected ?? (await jsm.streams.info(stream)).state.messages;
  const consumer = await jetstream(nc).consumers.get(
    stream,
    // One filter as a string: a list needs a server of 2.10 or later (Debian's is 2.9).
    options.filter === undefined ? {} : { filter_subjects: options.filter },
  );
  const read: ReadMessage[] = [];
  while (read.length < total) {
    const batch = await consumer.fetch({ max_messages: total - read.length, expires: 2000 });
    const before = read.length;
    for await (const m of batch) {
      read.push({
        seq: m.seq,
        subject: m.subject,
        msgId: m.headers?.get('Nats-Msg-Id'),
        payload: m.string(),
      });
    }
    if (read.length === before) throw new Error(`${stream}: read ${read.length} of ${total} messages`);
  }
  return read;
}

/** How many messages `stream` holds. */
export async function streamCount(nc: NatsConnection, stream: string): Promise<number> {
  return (await (await jetstreamManager(nc)).streams.info(stream)).state.messages;
}

/** Deletes `stream` when it exists. */
export async function deleteStream(nc: NatsConnection, stream: string): Promise<void> {
  try {
    await (await jetstreamManager(nc)).streams.delete(stream);
  } catch (error) {
    if (!(error instanceof JetStreamApiError && error.code === 10059)) throw error;
  }
}

/** Positions `from` … `to`, both included. */
export function positions(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

/** A private NATS server with JetStream, for tests that kill and restart it (never the shared one). */
export interface PrivateNats {
  url: string;
  /** Starts it again on the same port and store. */
  start(): Promise<void>;
  /** Kills it (SIGKILL: no clean shutdown). */
  kill(): Promise<void>;
  /** Kills it and deletes its store. */
  destroy(): Promise<void>;
}

/** Where the server program is: on PATH, or Debian's /usr/sbin. */
export function natsServerProgram(): string {
  return existsSync('/usr/sbin/nats-server') ? '/usr/sbin/nats-server' : 'nats-server';
}

/**
 * Starts a private `nats-server -js` on `port` (default a free one) with its own store; `args` go
 * to it (e.g. `['--auth', 'tok']`).
 */
export async function startPrivateNats(
  options: { args?: string[]; port?: number } = {},
): Promise<PrivateNats> {
  const port = options.port ?? (await freePort());
  const store = mkdtempSync(join(tmpdir(), 'nats-store-'));
  let child: ChildProcess | null = null;
  const start = async (): Promise<void> => {
    const running = spawn(
      natsServerProgram(),
      ['-a', '127.0.0.1', '-p', String(port), '-js', '-sd', store, ...(options.args ?? [])],
      { stdio: ['ignore', 'ignore', 'pipe'] },
    );
    child = running;
    let seen = '';
    await new Promise<void>((resolve, reject) => {
      running.stderr?.on('data', (chunk: Buffer) => {
        seen += chunk.toString();
        if (seen.includes('Server is ready')) resolve();
      });
      running.once('exit', (code) => reject(new Error(`nats-server exited with ${code}:\n${seen}`)));
    });
  };
  const kill = async (): Promise<void> => {
    const running = child;
    child = null;
    if (!running || running.exitCode !== null || running.signalCode !== null) return;
    running.kill('SIGKILL');
    await once(running, 'exit');
  };
  await start();
  return {
    url: `nats://127.0.0.1:${port}`,
    start,
    kill,
    async destroy() {
      await kill();
      rmSync(store, { recursive: true, force: true });
    },
  };
}
