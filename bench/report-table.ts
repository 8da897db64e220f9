import { distanceRows } from './distance.js';
import { isNotRun, type Maybe } from './figures.js';
import type { BenchResults, DialectScenarios, Ratios } from './report.js';
import {
  backfillRows,
  budgetRows,
  freshnessRows,
  HEADER,
  latencyRows,
  mb,
  notRunRow,
  type Row,
  runRow,
  secs,
  statusFreshnessRows,
  tailRows,
} from './report-rows.js';
import { serveRows } from './serve-report.js';

const fmt = (value: Maybe<number> | undefined): string =>
  value === undefined ? '—' : typeof value === 'number' ? String(value) : `not run (${value.notRun})`;

/** The scenarios' lines, each scenario by page number then by key (where measured). */
function scenarioRows(results: BenchResults): Row[] {
  const s = results.scenarios;
  const key = results.scenariosByKey;
  const dialects: Array<[DialectScenarios, string]> = [[s, '']];
  if (key !== undefined && !isNotRun(key)) dialects.push([key, ' by key']);
  const pageBackfill = !isNotRun(s.backfill);
  const rows: Row[] = [];
  for (const [scenarios, tag] of dialects)
    rows.push(...backfillRows(scenarios, tag, tag === '' || !pageBackfill));
  for (const [scenarios, tag] of dialects) rows.push(...latencyRows(scenarios, tag));
  for (const [scenarios, tag] of dialects) rows.push(...budgetRows(scenarios, tag));
  if (results.distance !== undefined) rows.push(...distanceRows(results.distance));
  for (const [scenarios, tag] of dialects) rows.push(...tailRows(scenarios, tag));
  for (const [scenarios, tag] of dialects) rows.push(...freshnessRows(scenarios, tag));
  for (const [scenarios, tag] of dialects) rows.push(...statusFreshnessRows(scenarios.statusFreshness, tag));
  for (const [name, point] of [
    ['small', s.memory.small],
    ['large', s.memory.large],
  ] as const) {
    if (isNotRun(point)) rows.push(notRunRow(`memory ${name}`, point.notRun));
    else
      rows.push([`memory ${point.records}`, 'indexer sync', '', '', '', '', '', mb(point.peakRssBytes), '']);
  }
  if (results.serve !== undefined) rows.push(...serveRows(results.serve));
  if (isNotRun(s.integrity)) rows.push(notRunRow('integrity', s.integrity.notRun));
  else {
    const i = s.integrity;
    rows.push(runRow(`integrity ${i.records}`, 'sync (hash checked)', i.plain));
    rows.push(runRow(`integrity ${i.records}`, 'sync --check-signatures', i.signatures));
    rows.push([
      'integrity checks',
      'CPU per record',
      '',
      '',
      '',
      '',
      '',
      '',
      `hash ${i.hashCpuUsPerRecord} µs (${i.hashShareOfSyncCpu ?? '—'} of sync's CPU per record); signature ${i.signatureCpuUsPerEvmRecord} µs per EVM record (${i.evmShare} of records)`,
    ]);
  }
  return rows;
}

/** The ratios of each dialect, `by page number | by key` where both ran. */
function ratioLines(results: BenchResults): string[] {
  const page = results.ratios;
  const key =
    results.ratiosByKey !== undefined && !isNotRun(results.ratiosByKey) ? results.ratiosByKey : null;
  const both = (name: string, line: (r: Ratios) => string): string =>
    `  ${name.padEnd(30)}${line(page)}${key ? `  |  by key: ${line(key)}` : ''}`;
  const s = results.scenarios;
  const m = page.peakRss1mVs100k;
  const lines = [
    '',
    `ratios (taken within this run; by page number${key ? ' | by key' : ''}):`,
    both(
      'indexer ÷ baseline',
      (r) => `sync ${fmt(r.indexerVsBaseline.sync)}, workers ${fmt(r.indexerVsBaseline.workers)}`,
    ),
    both(
      'indexer ÷ batch script',
      (r) => `sync ${fmt(r.indexerVsBatchScript.sync)}, workers ${fmt(r.indexerVsBatchScript.workers)}`,
    ),
    both('4 workers ÷ sync', (r) => fmt(r.workersVsSync)),
    both(
      'indexer ÷ COPY ceiling',
      (r) => `sync ${fmt(r.indexerVsCopy.sync)}, workers ${fmt(r.indexerVsCopy.workers)}`,
    ),
    both(
      'indexer ÷ min(ceilings)',
      (r) =>
        `sync ${fmt(r.indexerVsCeiling.sync)}, workers ${fmt(r.indexerVsCeiling.workers)} (lower: ${r.indexerVsCeiling.limitedBy ?? '—'})`,
    ),
    `  sync ÷ fetch-and-store ceiling ${fmt(page.syncVsPipelineCeiling)}; 2 × batch script ÷ it ${fmt(page.twiceScriptVsPipelineCeiling)}`,
    both(
      'list requests per record',
      (r) => `sync ${fmt(r.requestsPerRecord?.sync)}, workers ${fmt(r.requestsPerRecord?.workers)}`,
    ),
    both('latency ÷ ideal', (r) => fmt(r.latencyVsIdeal)),
    both('request budget ÷ ideal', (r) => fmt(r.budgetVsIdeal)),
    both('tail requests ÷ ideal', (r) => fmt(r.tailPagesVsIdeal)),
    `  --check-signatures ÷ sync     ${isNotRun(s.integrity) ? `not run (${s.integrity.notRun})` : String(s.integrity.signaturesVsPlain)}`,
    `  peak RSS large ÷ small        ${isNotRun(m) ? `not run (${m.notRun})` : `${m.value} (${m.largeRecords} ÷ ${m.smallRecords} records)`}`,
  ];
  const kp = results.keyVsPage;
  if (kp !== undefined && !isNotRun(kp)) {
    lines.push(
      `  by key ÷ by page number       sync rows/s ${fmt(kp.sync)}, workers rows/s ${fmt(kp.workers)}, rows/s under the request budget ${fmt(kp.budget)}, list requests per record ${fmt(kp.requestsPerRecord)}`,
    );
  }
  return lines;
}

/** The terminal report: one line per measured pass, then the ratios against their targets. */
export function renderTable(results: BenchResults): string {
  const rows = [HEADER, ...scenarioRows(results)];
  const widths = HEADER.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const lines = rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  lines.push(...ratioLines(results));
  lines.push('', 'targets (reported, not enforced):');
  for (const t of results.targets) {
    const verdict = t.met === null ? 'not measured' : t.met ? 'met' : 'MISSED';
    lines.push(
      `  ${t.name.padEnd(46)} ${String(t.value ?? '—').padEnd(10)} target ${t.target.padEnd(8)} ${verdict}`,
    );
  }
  const machine = results.machine;
  lines.push(
    '',
    `machine: ${machine.cores} cores (${machine.cpuModel}), ${(machine.memoryBytes / 2 ** 30).toFixed(0)} GiB, node ${machine.node}, PostgreSQL ${machine.postgres ?? '?'}; indexer run from ${results.runner}; total ${secs(results.totalWallMs)}`,
  );
  return lines.join('\n');
}
