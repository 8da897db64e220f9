import { type ChildProcess, spawn } from 'node:child_process';
import { appendFileSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { watchPeakRss } from './peak-rss.js';

const preload = new URL('./peak-rss-preload.mjs', import.meta.url).pathname;

/** How a measured child process ended. */
export interface ProcessResult {
  code: number | null;
  signal: NodeJS.Signals | null;
  wallMs: number;
  /** Peak resident set in bytes: the larger of getrusage's maxRSS (reported at exit) and the sampled VmHWM. */
  peakRssBytes: number | null;
  /** CPU time the process used (user + system), ms; null when it could not report it. */
  cpuMs: number | null;
  /** The last few kilobytes of stderr, for error messages. */
  stderrTail: string;
  stdout: string;
}

/** A running child whose wall time and peak memory are being measured. */
export interface MeasuredProcess {
  child: ChildProcess;
  pid: number;
  exited: Promise<ProcessResult>;
  /** Waits for the first stdout line matching `pattern`, up to `timeoutMs`. */
  waitForStdout(pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray>;
}

/** Starts `node <nodeArgs>` with the peak-memory preload, measuring from spawn to exit. */
export function spawnMeasured(input: {
  nodeArgs: string[];
  env: Record<string, string | undefined>;
  cwd: string;
  label: string;
  /** Where the child's stderr (its log) is appended as well; null = only its tail is kept. */
  logFile?: string | null;
}): MeasuredProcess {
  const rssFile = join(tmpdir(), `bench-rss-${process.pid}-${input.label}-${Date.now()}`);
  const started = performance.now();
  const child = spawn(process.execPath, ['--import', preload, ...input.nodeArgs], {
    cwd: input.cwd,
    env: { ...input.env, BENCH_PEAK_RSS_FILE: rssFile },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  if (child.pid === undefined) throw new Error(`could not start ${input.label}`);
  const pid = child.pid;
  const watcher = watchPeakRss(pid);
  let stdout = '';
  let stderrTail = '';
  const listeners: Array<() => void> = [];
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    if (stdout.length > 1_000_000) stdout = stdout.slice(-500_000);
    for (const listener of listeners) listener();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    if (input.logFile) appendFileSync(input.logFile, chunk);
    stderrTail = (stderrTail + chunk.toString()).slice(-8000);
  });
  const exited = new Promise<ProcessResult>((resolve) => {
    child.once('exit', (code, signal) => {
      const wallMs = performance.now() - started;
      const sampled = watcher.stop();
      const reported = readReportedPeaks(rssFile, pid);
      const peak = Math.max(sampled ?? 0, reported?.maxRssBytes ?? 0);
      // stdout may still hold buffered data after 'exit'; 'close' follows shortly.
      child.once('close', () =>
        resolve({
          code,
          signal,
          wallMs,
          peakRssBytes: peak > 0 ? peak : null,
          cpuMs: reported?.cpuMs ?? null,
          stderrTail,
          stdout,
        }),
      );
    });
  });
  const waitForStdout = (pattern: RegExp, timeoutMs: number): Promise<RegExpExecArray> =>
    new Promise((resolve, reject) => {
      const check = (): boolean => {
        const match = pattern.exec(stdout);
        if (match) {
          clearTimeout(timer);
          resolve(match);
          return true;
        }
        return false;
      };
      const timer = setTimeout(
        () => reject(new Error(`${input.label}: no output matching ${pattern} within ${timeoutMs} ms`)),
        timeoutMs,
      );
      if (check()) return;
      listeners.push(() => void check());
      child.once('exit', () => {
        if (!check()) {
          clearTimeout(timer);
          reject(new Error(`${input.label} exited before printing ${pattern}: ${stderrTail.slice(-600)}`));
        }
      });
    });
  return { child, pid, exited, waitForStdout };
}

function readReportedPeaks(base: string, pid: number): { maxRssBytes: number; cpuMs: number } | null {
  const file = `${base}.${pid}`;
  try {
    const value = JSON.parse(readFileSync(file, 'utf8')) as { maxRssBytes: number; cpuMs: number };
    rmSync(file, { force: true });
    return Number.isFinite(value.maxRssBytes) ? value : null;
  } catch {
    return null;
  }
}

/** Removes leftover peak-memory files of this benchmark run (a crashed child leaves one). */
export function cleanPeakFiles(): void {
  const prefix = `bench-rss-${process.pid}-`;
  for (const name of readdirSync(tmpdir())) {
    if (name.startsWith(prefix)) rmSync(join(tmpdir(), name), { force: true });
  }
}
