import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import type {
  ListRequestStats,
  SimulatorFaults,
  SimulatorOptions,
  SimulatorStats,
} from '../src/simulator/types.js';
import type { SimulatorControl } from './simulator-child.js';

const childScript = new URL('./simulator-child.ts', import.meta.url).pathname;

type ControlRequest = SimulatorControl extends infer T
  ? T extends { id: number }
    ? Omit<T, 'id'>
    : never
  : never;

/** A simulator running in its own process, driven over IPC. */
export interface SimulatorProcess {
  url: string;
  pid: number;
  count(): Promise<number>;
  headRawId(): Promise<number>;
  stats(): Promise<SimulatorStats>;
  /** List requests served by dialect (key or page numbers). */
  listRequests(): Promise<ListRequestStats>;
  addRecords(count: number): Promise<number>;
  pauseArrivals(): Promise<void>;
  resumeArrivals(): Promise<void>;
  settleAll(): Promise<void>;
  setFaults(faults: Partial<SimulatorFaults>): Promise<SimulatorFaults>;
  /** Writes the ground truth (malformed records left out) as NDJSON to `path`; resolves to its count. */
  dump(path: string, afterRawId?: number): Promise<number>;
  close(): Promise<void>;
}

/** Starts the simulator with `options` in a child process and waits until it listens. */
export async function startSimulatorProcess(
  options: SimulatorOptions,
  cwd: string,
): Promise<SimulatorProcess> {
  // A cache of more record texts than the default needs a larger heap (about 2.5 kB a record).
  const cached = options.jsonCacheSize ?? 0;
  const heap = cached > 300_000 ? [`--max-old-space-size=${1024 + Math.ceil((cached * 2.5) / 1024)}`] : [];
  const child = spawn(process.execPath, [...heap, '--import', 'tsx', childScript, JSON.stringify(options)], {
    cwd,
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr = (stderr + chunk.toString()).slice(-4000);
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    const onData = (chunk: Buffer): void => {
      out += chunk.toString();
      const match = /listening (\S+)/.exec(out);
      if (match?.[1]) {
        child.stdout?.off('data', onData);
        resolve(match[1]);
      }
    };
    child.stdout?.on('data', onData);
    child.once('exit', (code) =>
      reject(new Error(`simulator exited (${code}) before listening: ${stderr.trim()}`)),
    );
  });
  return wrap(child, url);
}

function wrap(child: ChildProcess, url: string): SimulatorProcess {
  let nextId = 1;
  const pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  child.on('message', (message: { id: number; ok: boolean; result?: unknown; error?: string }) => {
    const waiter = pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id);
    if (message.ok) waiter.resolve(message.result);
    else waiter.reject(new Error(`simulator: ${message.error}`));
  });
  child.once('exit', () => {
    for (const waiter of pending.values()) waiter.reject(new Error('simulator process exited'));
    pending.clear();
  });
  const call = <T>(request: ControlRequest): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      const id = nextId++;
      pending.set(id, { resolve: resolve as (value: unknown) => void, reject });
      child.send({ ...request, id });
    });
  return {
    url,
    pid: child.pid ?? 0,
    count: () => call<number>({ op: 'count' }),
    headRawId: () => call<number>({ op: 'head' }),
    stats: () => call<SimulatorStats>({ op: 'stats' }),
    listRequests: () => call<ListRequestStats>({ op: 'lists' }),
    addRecords: (count) => call<number>({ op: 'add', count }),
    pauseArrivals: () => call<void>({ op: 'pause' }),
    resumeArrivals: () => call<void>({ op: 'resume' }),
    settleAll: () => call<void>({ op: 'settle' }),
    setFaults: (faults) => call<SimulatorFaults>({ op: 'faults', faults }),
    dump: (path, afterRawId) =>
      call<number>(afterRawId === undefined ? { op: 'dump', path } : { op: 'dump', path, afterRawId }),
    async close() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = once(child, 'exit');
      child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** List pages served (`/txs`, `/txsByAccount/…`, `/txs/{account}`), from the simulator's stats. */
export function listPagesServed(stats: SimulatorStats): number {
  let total = 0;
  for (const [route, byStatus] of Object.entries(stats)) {
    if (!/^GET \/txs(?!ByHash)/.test(route)) continue;
    for (const count of Object.values(byStatus)) total += count;
  }
  return total;
}

/** Every request served, whatever the route (control routes under `/_sim/` excluded). */
export function requestsServed(stats: SimulatorStats): number {
  let total = 0;
  for (const [route, byStatus] of Object.entries(stats)) {
    if (route.includes('/_sim/')) continue;
    for (const count of Object.values(byStatus)) total += count;
  }
  return total;
}

/** Requests served per route (control routes under `/_sim/` excluded), every status counted. */
export function requestsByRoute(stats: SimulatorStats): Record<string, number> {
  const byRoute: Record<string, number> = {};
  for (const [route, byStatus] of Object.entries(stats)) {
    if (route.includes('/_sim/')) continue;
    byRoute[route] = Object.values(byStatus).reduce((sum, count) => sum + count, 0);
  }
  return byRoute;
}

/** List requests served between two readings of {@link SimulatorProcess.listRequests}, by dialect. */
export function listRequestsBetween(
  before: ListRequestStats,
  after: ListRequestStats,
): { key: number; page: number } {
  return { key: after.keyRequests - before.keyRequests, page: after.pageRequests - before.pageRequests };
}
