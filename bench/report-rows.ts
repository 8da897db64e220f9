/** The terminal report's lines per scenario, in one dialect (`tag`: '' or ' by key'). */
import { isNotRun, type Maybe, requestsPerRow, type ThroughputRun } from './figures.js';
import type { BenchResults, DialectScenarios } from './report.js';
import type { LagFigures } from './status-lags.js';

export type Row = string[];

export const HEADER: Row = [
  'scenario',
  'run',
  'rows',
  'wall',
  'cpu',
  'rows/s',
  'requests',
  'peak RSS',
  'note',
];

export const mb = (bytes: number | null | undefined): string =>
  bytes ? `${(bytes / 1e6).toFixed(0)} MB` : '—';
export const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** A row saying why `scenario` has no figures. */
export const notRunRow = (scenario: string, why: string): Row => [
  scenario,
  '',
  '',
  '',
  '',
  '',
  '',
  '',
  `not run: ${why}`,
];

/** One measured pass; the list requests per stored record in its note when counted. */
export function runRow(scenario: string, name: string, run: Maybe<ThroughputRun>): Row {
  if (isNotRun(run)) return [scenario, name, '', '', '', '', '', '', `not run: ${run.notRun}`];
  const match = run.rowsMatch === false ? `ROWS ≠ ${run.expectedRows}` : '';
  const perRow = requestsPerRow(run);
  const requests =
    run.listRequests === undefined
      ? ''
      : `${typeof perRow === 'number' ? perRow : '—'} list requests/record (${run.listRequests.key} by key, ${run.listRequests.page} by page)`;
  return [
    scenario,
    name,
    String(run.rows),
    secs(run.wallMs),
    run.cpuMs === undefined || run.cpuMs === null ? '—' : secs(run.cpuMs),
    run.rowsPerSecond.toFixed(0),
    run.pagesRequested === null ? '—' : String(run.pagesRequested),
    mb(run.peakRssBytes),
    [match, requests, run.note ?? ''].filter(Boolean).join('; '),
  ];
}

/**
 * The backfill's passes. By key, the one-record baseline and the COPY and fetch-and-store
 * ceilings are the same runs as by page number: shown once, unless `withShared`.
 */
export function backfillRows(s: DialectScenarios, tag: string, withShared: boolean): Row[] {
  if (isNotRun(s.backfill)) return [notRunRow(`backfill${tag}`, s.backfill.notRun)];
  const b = s.backfill;
  const label = `backfill ${b.records}${tag}`;
  const rows = [
    runRow(label, 'indexer sync', b.indexerSync),
    runRow(label, 'indexer workers', b.indexerWorkers),
  ];
  if (withShared) rows.push(runRow(label, 'baseline (hand-written)', b.baseline));
  rows.push(runRow(label, `batch script${tag} (hand-written)`, b.batchBaseline));
  rows.push(runRow(label, `HTTP ceiling${tag}`, b.httpCeiling));
  if (withShared) {
    rows.push(runRow(label, 'database ceiling (COPY)', b.dbCeiling));
    if (b.pipelineCeiling) rows.push(runRow(label, 'fetch-and-store ceiling', b.pipelineCeiling));
  }
  return rows;
}

export function latencyRows(s: DialectScenarios, tag: string): Row[] {
  if (isNotRun(s.latency)) return [notRunRow(`latency${tag}`, s.latency.notRun)];
  const l = s.latency;
  const perRequest = Math.round((l.idealRowsPerSecond * l.latencyMs) / 1000 / l.concurrency);
  return [
    runRow(`latency ${l.latencyMs} ms, ${l.records}${tag}`, 'indexer sync', l.run),
    [
      '',
      'ideal',
      '',
      '',
      '',
      l.idealRowsPerSecond.toFixed(0),
      '',
      '',
      `${l.concurrency} in flight × ${perRequest} ÷ ${l.latencyMs / 1000} s`,
    ],
  ];
}

export function budgetRows(s: DialectScenarios, tag: string): Row[] {
  const budget = s.budget;
  if (budget === undefined) return [];
  if (isNotRun(budget)) return [notRunRow(`budget${tag}`, budget.notRun)];
  return [
    runRow(
      `budget ${budget.requestsPerSecond} requests/s, ${budget.records}${tag}`,
      'indexer sync',
      budget.run,
    ),
    [
      '',
      'ideal',
      '',
      '',
      '',
      budget.idealRowsPerSecond.toFixed(0),
      '',
      '',
      `${budget.requestsPerSecond} requests/s × ${budget.recordsPerRequest} (the whole process timed, start-up included)`,
    ],
  ];
}

export function tailRows(s: DialectScenarios, tag: string): Row[] {
  if (isNotRun(s.tail)) return [notRunRow(`tail${tag}`, s.tail.notRun)];
  const t = s.tail;
  return [
    [
      `tail +${t.newRecords} on ${t.history}${tag}`,
      'indexer sync',
      String(t.rows),
      secs(t.wallMs),
      '',
      '',
      String(t.pagesRequested),
      mb(t.peakRssBytes),
      `ideal ${t.idealPages} list requests; ${t.requestsServed} requests in all${t.rowsMatch ? '' : `; ROWS ≠ ${t.expectedRows}`}`,
    ],
  ];
}

export function freshnessRows(s: DialectScenarios, tag: string): Row[] {
  if (isNotRun(s.freshness)) return [notRunRow(`freshness${tag}`, s.freshness.notRun)];
  const f = s.freshness;
  return [
    [
      `freshness ${f.arrivalsPerSecond}/s${tag}`,
      `workers ×${f.workerProcesses}, every ${f.every}`,
      `${f.stored}/${f.arrived}`,
      secs(f.durationMs),
      '',
      '',
      '',
      mb(f.peakRssBytes),
      `delay p50 ${f.delayMs.p50} ms, p95 ${f.delayMs.p95} ms, max ${f.delayMs.max} ms`,
    ],
  ];
}

/** One line per run of the status-freshness scenario: lags per kind of change, requests per arrival. */
export function statusFreshnessRows(
  status: BenchResults['scenarios']['statusFreshness'],
  tag: string,
): Row[] {
  if (isNotRun(status)) return [notRunRow(`status freshness${tag}`, status.notRun)];
  const lag = (f: LagFigures): string =>
    `p50 ${f.p50} / p95 ${f.p95} / max ${f.max} ms${f.missed > 0 ? `, ${f.missed} of ${f.changes} MISSED` : ''}`;
  return status.runs.map((run) => [
    `status freshness ${status.arrivalsPerSecond}/s${tag}`,
    run.mode === 'workers'
      ? `workers ×${run.processes}, every ${secs(run.intervalMs)}`
      : `sync every ${secs(run.intervalMs)}`,
    String(run.arrived),
    secs(status.windowMs),
    '',
    '',
    String(run.requests),
    '',
    `${run.requestsPerArrival} requests/arrival; packaged ${lag(run.packaged)}; target hash ${lag(run.targetHash)}; all ${lag(run.all)}`,
  ]);
}
