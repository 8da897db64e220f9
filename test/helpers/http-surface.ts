/**
 * The HTTP surface in tests: opening it over a test database as `serve` does, plain GETs, and the
 * values of the Prometheus text.
 */
import { openHttpSurface } from '../../src/app/http-routes.js';
import { loadConfig } from '../../src/config.js';
import type { HttpSurface } from '../../src/http/server.js';
import { type Logger, silentLogger } from '../../src/logger.js';
import { createMetrics } from '../../src/metrics/index.js';
import type { TestDatabase } from './database.js';

/** The surface over `testDb` on a free port, its settings beyond `DATABASE_URL` from `env`. */
export function openTestSurface(input: {
  testDb: Pick<TestDatabase, 'url' | 'database'>;
  signal: AbortSignal;
  env?: Record<string, string> | undefined;
  logger?: Logger | undefined;
}): Promise<HttpSurface> {
  return openHttpSurface({
    config: loadConfig({ DATABASE_URL: input.testDb.url, ...input.env }),
    database: input.testDb.database,
    logger: input.logger ?? silentLogger(),
    metrics: createMetrics(),
    port: 0,
    signal: input.signal,
  });
}

/** A GET (or another method) of `url`: status, body, and the body as JSON when it is JSON. */
export async function fetchText(
  url: string,
  init: { method?: string } = {},
): Promise<{ status: number; body: string; json: unknown; contentType: string | null }> {
  const response = await fetch(url, { method: init.method ?? 'GET' });
  const body = await response.text();
  const contentType = response.headers.get('content-type');
  let json: unknown;
  if (contentType?.startsWith('application/json')) json = JSON.parse(body);
  return { status: response.status, body, json, contentType };
}

/** One sample of the Prometheus text format. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

/** Every sample of a Prometheus text exposition (comments skipped). */
export function parseSamples(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
    if (!match) throw new Error(`not a sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const pair of (match[2] ?? '').matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) {
      labels[pair[1] as string] = (pair[2] as string).replace(/\\(.)/g, '$1');
    }
    samples.push({ name: match[1] as string, labels, value: Number(match[3]) });
  }
  return samples;
}

/** The sum of the samples named `name` whose labels include `labels`; `undefined` when none. */
export function sampleSum(
  samples: readonly Sample[],
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  const found = samples.filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  return found.length === 0 ? undefined : found.reduce((sum, s) => sum + s.value, 0);
}
