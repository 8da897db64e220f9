/**
 * Answers by key read and encoded for a COPY on other threads (`copy-encoder-thread.ts`) while
 * the main thread reads the next answers and writes the last ones. A backfill by key is bound by
 * the one thread that parses, encodes and writes (docs/performance.md): the parse, the encoding,
 * the hash check, the bundle items and the COPY lines are most of its work, and are the records'
 * alone. An answer goes as its text (a string crosses threads for a copy of its bytes, where the
 * records' objects would cost about what parsing them does), so the main thread never parses it.
 * An encoding that is missing or failed only sends the commit the full way, which parses and
 * encodes on the main thread.
 */
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import type {
  AnswerRead,
  AnswerWindow,
  CopyEncodeOptions,
  CopyEncoder,
  CopyEncoding,
} from '../../db/write/copy-encoding.js';
import type { Logger } from '../../logger.js';

/** An answer sent to a thread to read (`CopyEncoder.read`): its JSON, and the window to encode. */
export interface CopyEncodeRequest {
  id: number;
  options: CopyEncodeOptions;
  text: string;
  window: AnswerWindow;
}

/** A thread's answer: the encoding, or null (a record it cannot encode, or `error`). */
export interface CopyEncodeReply {
  id: number;
  encoding: CopyEncoding | null;
  /** What the walk needs of the answer (absent: it could not be parsed). */
  read?: Omit<AnswerRead, 'encoding'>;
  error?: string;
}

/** What a thread sends: a reply, or word that it is ready to read (sent once, first). */
export type CopyEncoderMessage = CopyEncodeReply | { ready: true };

/** Threads by default: one fewer than the cores, at most two (the main thread needs a core too). */
export function defaultEncoderThreads(): number {
  return Math.max(0, Math.min(2, availableParallelism() - 1));
}

/** One thread and the encodings it owes. */
interface EncoderThread {
  worker: Worker;
  waiting: Map<number, (reply: CopyEncodeReply | null) => void>;
}

/**
 * Answers a second from which the threads start: slower, the main thread parses them with time to
 * spare. 200 ms away, `sync` at 50 or 100 requests a second starts them (at 100 they keep its
 * lanes' requests going); four workers sharing a budget of 50 read about 12 each, and threads of
 * their own only took the two cores the four processes share (docs/performance.md).
 */
export const THREADS_FROM_ANSWERS = 30;

/**
 * Creates an encoder with `threads` threads (default {@link defaultEncoderThreads}), started once
 * reads come at `threadsFrom` a second (default {@link THREADS_FROM_ANSWERS}; 0: on the first
 * read), and sent reads once they are ready. The reads before are missing, read by the walk
 * itself: a thread's start takes a few hundred milliseconds on a busy machine, and every lane of a
 * walk waited that long on its first answer. With none, or once a thread has failed, every
 * encoding is missing.
 */
export function createCopyEncoder(
  options: {
    threads?: number;
    threadsFrom?: number | undefined;
    logger?: Logger | undefined;
    /** Clock of the read rate, ms. Default `performance.now`. */
    now?: (() => number) | undefined;
  } = {},
): CopyEncoder {
  const count = options.threads ?? defaultEncoderThreads();
  const wanted = fastEnough(options.threadsFrom ?? THREADS_FROM_ANSWERS, options.now);
  let threads: EncoderThread[] | null = null;
  // Those that have loaded what they read with: answers sent to them are not held up by a start.
  const ready: EncoderThread[] = [];
  let broken = count <= 0;
  let nextId = 0;
  let readied: (ready: boolean) => void = () => undefined;
  const readiness = new Promise<boolean>((resolve) => {
    readied = resolve;
  });

  const fail = (reason: unknown): void => {
    if (!broken)
      options.logger?.warn({ err: reason }, 'COPY encoding threads failed: encoding on the main thread');
    broken = true;
    readied(false);
    for (const thread of threads ?? []) {
      for (const resolve of thread.waiting.values()) resolve(null);
      thread.waiting.clear();
      void thread.worker.terminate();
    }
  };

  const start = (): EncoderThread[] => {
    const entry = threadStart();
    return Array.from({ length: count }, () =>
      startThread(entry, {
        logger: options.logger,
        broken: () => broken,
        fail,
        ready: (thread) => {
          ready.push(thread);
          readied(true);
        },
      }),
    );
  };

  /** Starts the threads unless they run; false when none can. */
  const started = (): boolean => {
    if (broken) return false;
    try {
      threads ??= start();
      return true;
    } catch (error) {
      fail(error);
      return false;
    }
  };

  /** Sends a request to a ready thread; null when none is ready, runs, or it failed. */
  const send = (request: CopyEncodeRequest): Promise<CopyEncodeReply | null> => {
    if (threads === null && !broken && !wanted()) return Promise.resolve(null);
    if (!started() || ready.length === 0) return Promise.resolve(null);
    const thread = ready[request.id % ready.length]!;
    return new Promise((resolve) => {
      if (thread.waiting.size === 0) thread.worker.ref();
      thread.waiting.set(request.id, resolve);
      thread.worker.postMessage(request);
    });
  };

  return {
    async read(text, window, encodeOptions) {
      const id = nextId++;
      const reply = await send({ id, options: encodeOptions, text, window });
      if (reply?.read === undefined) return null;
      return { ...reply.read, encoding: reply.encoding };
    },
    ready: () => (started() ? readiness : Promise.resolve(false)),
    get started() {
      return threads !== null;
    },
    async close() {
      const running = threads ?? [];
      broken = true;
      readied(false);
      for (const thread of running) {
        for (const resolve of thread.waiting.values()) resolve(null);
        thread.waiting.clear();
      }
      await Promise.all(running.map((thread) => thread.worker.terminate()));
    },
  };
}

/** Counts a read, and tells whether `perSecond` came within the last second (0: always). */
function fastEnough(perSecond: number, now: () => number = () => performance.now()): () => boolean {
  // The times of the last `perSecond` reads.
  const times: number[] = [];
  return () => {
    if (perSecond <= 0) return true;
    const at = now();
    times.push(at);
    if (times.length > perSecond) times.shift();
    return times.length >= perSecond && at - times[0]! < 1000;
  };
}

/** Starts one thread, its replies handed to the requests that wait for them. */
function startThread(
  entry: { code: string | URL; eval: boolean },
  hooks: {
    logger: Logger | undefined;
    broken: () => boolean;
    fail: (reason: unknown) => void;
    ready: (thread: EncoderThread) => void;
  },
): EncoderThread {
  const worker = new Worker(entry.code, { eval: entry.eval });
  // Held open only while an encoding is owed: an idle thread never keeps the process alive.
  worker.unref();
  const thread: EncoderThread = { worker, waiting: new Map() };
  worker.on('message', (message: CopyEncoderMessage) => {
    if ('ready' in message) {
      hooks.ready(thread);
      return;
    }
    const reply = message;
    const resolve = thread.waiting.get(reply.id);
    thread.waiting.delete(reply.id);
    if (thread.waiting.size === 0) worker.unref();
    if (reply.error !== undefined) hooks.logger?.warn({ error: reply.error }, 'COPY encoding failed');
    resolve?.(reply);
  });
  worker.on('error', hooks.fail);
  worker.on('exit', (code) => {
    if (!hooks.broken()) hooks.fail(new Error(`COPY encoding thread exited with ${code}`));
  });
  return thread;
}

/**
 * How to start the thread: its module next to this one once compiled, or beside the chunks of the
 * bundled command (`dist/cli/chunks/…` → `dist/cli/`); else the source, through tsx's loader
 * (registered in the thread before the module loads: a worker's `--import` does not reach it).
 */
function threadStart(): { code: string | URL; eval: boolean } {
  for (const candidate of ['./copy-encoder-thread.js', '../copy-encoder-thread.js']) {
    const url = new URL(candidate, import.meta.url);
    if (existsSync(fileURLToPath(url))) return { code: url, eval: false };
  }
  const source = new URL('./copy-encoder-thread.ts', import.meta.url);
  if (!existsSync(fileURLToPath(source))) throw new Error('copy-encoder-thread module not found');
  const code = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(source.href)}); })`;
  return { code, eval: true };
}
