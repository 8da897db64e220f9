import { isNotRun, type Maybe, type ThroughputRun } from './figures.js';
import type { BenchResults } from './report.js';
import type { LagFigures } from './status-lags.js';

const mb = (bytes: number | null | undefined): string => (bytes ? `${(bytes / 1e6).toFixed(0)} MB` : '—');
const secs = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const fmt = (value: Maybe<number>): string =>
  typeof value === 'number' ? String(value) : `not run (${value.notRun})`;

/** One line per run of the status-freshness scenario: lags per kind of change, requests per arrival. */
function statusFreshnessRows(status: BenchResults['scenarios']['statusFreshness']): string[][] {
  if (isNotRun(status))
    return [['status freshness', '', '', '', '', '', '', '', `not run: ${status.notRun}`]];
  const lag = (f: LagFigures): string =>
    `p50 ${f.p50} / p95 ${f.p95} / max ${f.max} ms${f.missed > 0 ? `, ${f.missed} of ${f.changes} MISSED` : ''}`;
  return status.runs.map((run) => [
    `status freshness ${status.arrivalsPerSecond}/s`,
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

/** The terminal report: one line per measured pass, then the ratios against their targets. */
export function renderTable(results: BenchResults): string {
  const rows: string[][] = [
    ['scenario', 'run', 'rows', 'wall', 'cpu', 'rows/s', 'pages', 'peak RSS', 'note'],
  ];
  const s = results.scenarios;
  const addRun = (scenario: string, name: string, run: Maybe<ThroughputRun>): void => {
    if (isNotRun(run)) {
      rows.push([scenario, name, '', '', '', '', '', '', `not run: ${run.notRun}`]);
      return;
    }
    const match = run.rowsMatch === false ? `ROWS ≠ ${run.expectedRows}` : '';
    rows.push([
      scenario,
      name,
      String(run.rows),
      secs(run.wallMs),
      run.cpuMs === undefined || run.cpuMs === null ? '—' : secs(run.cpuMs),
      run.rowsPerSecond.toFixed(0),
      run.pagesRequested === null ? '—' : String(run.pagesRequested),
      mb(run.peakRssBytes),
      [match, run.note ?? ''].filter(Boolean).join('; '),
    ]);
  };
  if (isNotRun(s.backfill))
    rows.push(['backfill', '', '', '', '', '', '', '', `not run: ${s.backfill.notRun}`]);
  else {
    const b = s.backfill;
    const label = `backfill ${b.records}`;
    addRun(label, 'indexer sync', b.indexerSync);
    addRun(label, 'indexer workers', b.indexerWorkers);
    addRun(label, 'baseline (hand-written)', b.baseline);
    addRun(label, 'batch script (hand-written)', b.batchBaseline);
    addRun(label, 'HTTP ceiling', b.httpCeiling);
    addRun(label, 'database ceiling (COPY)', b.dbCeiling);
    if (b.pipelineCeiling) addRun(label, 'fetch-and-store ceiling', b.pipelineCeiling);
  }
  if (isNotRun(s.latency)) rows.push(['latency', '', '', '', '', '', '', '', `not run: ${s.latency.notRun}`]);
  else {
    const l = s.latency;
    addRun(`latency ${l.latencyMs} ms, ${l.records}`, 'indexer sync', l.run);
    rows.push([
      '',
      'ideal',
      '',
      '',
      '',
      l.idealRowsPerSecond.toFixed(0),
      '',
      '',
      `${l.concurrency} × 10 ÷ ${l.latencyMs / 1000} s`,
    ]);
  }
  if (isNotRun(s.tail)) rows.push(['tail', '', '', '', '', '', '', '', `not run: ${s.tail.notRun}`]);
  else {
    const t = s.tail;
    rows.push([
      `tail +${t.newRecords} on ${t.history}`,
      'indexer sync',
      String(t.rows),
      secs(t.wallMs),
      '',
      '',
      String(t.pagesRequested),
      mb(t.peakRssBytes),
      `ideal ${t.idealPages} pages; ${t.requestsServed} requests in all${t.rowsMatch ? '' : `; ROWS ≠ ${t.expectedRows}`}`,
    ]);
  }
  if (isNotRun(s.freshness))
    rows.push(['freshness', '', '', '', '', '', '', '', `not run: ${s.freshness.notRun}`]);
  else {
    const f = s.freshness;
    rows.push([
      `freshness ${f.arrivalsPerSecond}/s`,
      `workers ×${f.workerProcesses}, every ${f.every}`,
      `${f.stored}/${f.arrived}`,
      secs(f.durationMs),
      '',
      '',
      '',
      mb(f.peakRssBytes),
      `delay p50 ${f.delayMs.p50} ms, p95 ${f.delayMs.p95} ms, max ${f.delayMs.max} ms`,
    ]);
  }
  rows.push(...statusFreshnessRows(s.statusFreshness));
  for (const [name, point] of [
    ['small', s.memory.small],
    ['large', s.memory.large],
  ] as const) {
    if (isNotRun(point))
      rows.push([`memory ${name}`, '', '', '', '', '', '', '', `not run: ${point.notRun}`]);
    else
      rows.push([`memory ${point.records}`, 'indexer sync', '', '', '', '', '', mb(point.peakRssBytes), '']);
  }
  if (isNotRun(s.integrity))
    rows.push(['integrity', '', '', '', '', '', '', '', `not run: ${s.integrity.notRun}`]);
  else {
    const i = s.integrity;
    addRun(`integrity ${i.records}`, 'sync (hash checked)', i.plain);
    addRun(`integrity ${i.records}`, 'sync --check-signatures', i.signatures);
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
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const lines = rows.map((r) =>
    r
      .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
  lines.splice(1, 0, widths.map((w) => '-'.repeat(w)).join('  '));
  const r = results.ratios;
  lines.push('', 'ratios (taken within this run):');
  lines.push(
    `  indexer ÷ baseline            sync ${fmt(r.indexerVsBaseline.sync)}, workers ${fmt(r.indexerVsBaseline.workers)}`,
  );
  lines.push(
    `  indexer ÷ batch script        sync ${fmt(r.indexerVsBatchScript.sync)}, workers ${fmt(r.indexerVsBatchScript.workers)}`,
  );
  lines.push(`  4 workers ÷ sync              ${fmt(r.workersVsSync)}`);
  lines.push(
    `  indexer ÷ COPY ceiling        sync ${fmt(r.indexerVsCopy.sync)}, workers ${fmt(r.indexerVsCopy.workers)}`,
  );
  lines.push(
    `  indexer ÷ min(ceilings)       sync ${fmt(r.indexerVsCeiling.sync)}, workers ${fmt(r.indexerVsCeiling.workers)} (lower ceiling: ${r.indexerVsCeiling.limitedBy ?? '—'})`,
  );
  lines.push(
    `  sync ÷ fetch-and-store ceiling ${fmt(r.syncVsPipelineCeiling)}; 2 × batch script ÷ it ${fmt(r.twiceScriptVsPipelineCeiling)}`,
  );
  lines.push(`  latency ÷ ideal               ${fmt(r.latencyVsIdeal)}`);
  lines.push(`  tail pages ÷ ideal            ${fmt(r.tailPagesVsIdeal)}`);
  lines.push(
    `  --check-signatures ÷ sync     ${isNotRun(s.integrity) ? `not run (${s.integrity.notRun})` : String(s.integrity.signaturesVsPlain)}`,
  );
  const m = r.peakRss1mVs100k;
  lines.push(
    `  peak RSS large ÷ small        ${isNotRun(m) ? `not run (${m.notRun})` : `${m.value} (${m.largeRecords} ÷ ${m.smallRecords} records)`}`,
  );
  lines.push('', 'targets (reported, not enforced):');
  for (const t of results.targets) {
    const verdict = t.met === null ? 'not measured' : t.met ? 'met' : 'MISSED';
    lines.push(
      `  ${t.name.padEnd(40)} ${String(t.value ?? '—').padEnd(10)} target ${t.target.padEnd(8)} ${verdict}`,
    );
  }
  const machine = results.machine;
  lines.push(
    '',
    `machine: ${machine.cores} cores (${machine.cpuModel}), ${(machine.memoryBytes / 2 ** 30).toFixed(0)} GiB, node ${machine.node}, PostgreSQL ${machine.postgres ?? '?'}; indexer run from ${results.runner}; total ${secs(results.totalWallMs)}`,
  );
  return lines.join('\n');
}
