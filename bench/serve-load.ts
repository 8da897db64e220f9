/**
 * A closed-loop load generator for the mirror's read API: `clients` loops, each over a kept-alive
 * connection of its own, send a request, read the whole answer, check it, and send the next, for
 * a fixed time after a warm-up. Answers a second, latency percentiles, and every failed check.
 */
import { Pool } from 'undici';
import { percentile } from './freshness.js';

/**
 * What a check found in one 200 answer: the records it held and whether that is fewer than
 * asked (a list's end), or why it is wrong.
 */
export type AnswerCheck = { ok: true; records: number; short: boolean } | { ok: false; why: string };

/** One request of a load run. */
export interface PlannedRequest {
  /** Its kind in the mix (`global asc`, `by account desc`…), for the report. */
  kind: string;
  path: string;
  /** Checks a 200 answer's body. */
  check(body: Buffer): AnswerCheck;
}

/** Latency percentiles of a run, ms. */
export interface LatencyFigures {
  p50: number;
  p95: number;
  p99: number;
  max: number;
  mean: number;
}

/** Answers of one kind in a run. */
export interface KindFigures {
  answers: number;
  /** Records the answers held, together. */
  records: number;
  /** Answers that held fewer records than asked (a list's end), among `answers`. */
  short: number;
}

/** What a load run measured, over its measured window (after the warm-up). */
export interface LoadFigures {
  clients: number;
  warmupMs: number;
  durationMs: number;
  /** Answers completed within the window (failed ones included). */
  answers: number;
  answersPerSecond: number;
  latencyMs: LatencyFigures;
  /** Answers that were not 200 or failed their check, and the first few reasons. */
  failed: number;
  failures: string[];
  byKind: Record<string, KindFigures>;
  /** Mean bytes of an answer's body. */
  meanBodyBytes: number;
}

/** Records a full answer holds: asked of every list request, and the check's yardstick. */
export const LIST_COUNT = 100;

/**
 * Runs `clients` request loops against `origin` for `warmupMs` (not measured) then `durationMs`;
 * `next(client)` plans each request. An answer counts in the window it completes in; its
 * latency counts when it was also sent in the window.
 */
export async function runClosedLoad(input: {
  origin: string;
  clients: number;
  warmupMs: number;
  durationMs: number;
  next(client: number): PlannedRequest;
}): Promise<LoadFigures> {
  const { clients, warmupMs, durationMs } = input;
  const pool = new Pool(input.origin, { connections: clients, pipelining: 1, keepAliveTimeout: 60_000 });
  const started = performance.now();
  const from = started + warmupMs;
  const until = from + durationMs;
  const latencies: number[] = [];
  const failures: string[] = [];
  const byKind: Record<string, KindFigures> = {};
  let answers = 0;
  let failed = 0;
  let bodyBytes = 0;
  const loop = async (client: number): Promise<void> => {
    while (performance.now() < until) {
      const plan = input.next(client);
      const sent = performance.now();
      const answer = await fetchAnswer(pool, plan.path);
      const done = performance.now();
      if (done < from || done > until) continue;
      answers += 1;
      bodyBytes += answer.body.length;
      if (sent >= from) latencies.push(done - sent);
      const verdict: AnswerCheck =
        answer.status === 200
          ? plan.check(answer.body)
          : { ok: false, why: `HTTP ${answer.status}: ${answer.body.toString('utf8', 0, 200)}` };
      if (!verdict.ok) {
        failed += 1;
        if (failures.length < 5) failures.push(`${plan.path}: ${verdict.why}`);
        continue;
      }
      const kind = byKind[plan.kind] ?? { answers: 0, records: 0, short: 0 };
      byKind[plan.kind] = kind;
      kind.answers += 1;
      kind.records += verdict.records;
      if (verdict.short) kind.short += 1;
    }
  };
  try {
    await Promise.all(Array.from({ length: clients }, (_, client) => loop(client)));
  } finally {
    await pool.close();
  }
  return {
    clients,
    warmupMs,
    durationMs,
    answers,
    answersPerSecond: Math.round((answers * 1000) / durationMs),
    latencyMs: latencyFigures(latencies),
    failed,
    failures,
    byKind,
    meanBodyBytes: answers > 0 ? Math.round(bodyBytes / answers) : 0,
  };
}

/** One answer whole; a failed connection is status 0 with the error as its body. */
async function fetchAnswer(pool: Pool, path: string): Promise<{ status: number; body: Buffer }> {
  try {
    const response = await pool.request({ method: 'GET', path });
    return { status: response.statusCode, body: Buffer.from(await response.body.arrayBuffer()) };
  } catch (error) {
    return { status: 0, body: Buffer.from(error instanceof Error ? error.message : String(error)) };
  }
}

/** Nearest-rank percentiles of `values` (ms, one decimal). */
export function latencyFigures(values: number[]): LatencyFigures {
  const sorted = [...values].sort((a, b) => a - b);
  const at = (q: number) => Math.round(percentile(sorted, q) * 10) / 10;
  const mean = sorted.reduce((sum, v) => sum + v, 0) / Math.max(1, sorted.length);
  return {
    p50: at(0.5),
    p95: at(0.95),
    p99: at(0.99),
    max: at(1),
    mean: Math.round(mean * 10) / 10,
  };
}
