/** The serve scenario in the report: its lines in the table, and its targets (the issue's). */
import { isNotRun, type Maybe, round } from './figures.js';
import type { CoresUsed } from './proc-cpu.js';
import type { Target } from './report.js';
import { mb, notRunRow, type Row, runRow, secs } from './report-rows.js';
import type { FeedPhaseFigures } from './serve-feed.js';
import type { ServeFigures, ServeLoad, ServeOptions } from './serve-scenario.js';

/** The table's lines: the mirror's build, the two load runs, one line per feed phase. */
export function serveRows(figures: Maybe<ServeFigures>): Row[] {
  if (isNotRun(figures)) return [notRunRow('serve', figures.notRun)];
  const label = `serve ${figures.records}`;
  const build = runRow(label, 'the mirror: indexer sync by key, no budget', figures.build);
  build[8] = [build[8], `then ANALYZE ${secs(figures.analyzeMs)}`].filter(Boolean).join('; ');
  const rows: Row[] = [build];
  rows.push(loadRow(label, `list answers by key, ${clientsOf(figures.lists)} clients`, figures.lists));
  rows.push(loadRow(label, `look-ups by hash, ${clientsOf(figures.lookups)} clients`, figures.lookups));
  const ceiling = figures.ceiling;
  for (const [name, run] of [
    ['ceiling: one list answer stored', isNotRun(ceiling) ? ceiling : ceiling.lists],
    ['ceiling: one look-up answer stored', isNotRun(ceiling) ? ceiling : ceiling.lookups],
  ] as const) {
    rows.push(
      loadRow(label, name, isNotRun(run) ? run : { median: run, answersPerSecond: [run.answersPerSecond] }),
    );
  }
  for (const phase of figures.feed) rows.push(feedRow(label, phase));
  return rows;
}

const clientsOf = (load: Maybe<ServeLoad>): string => (isNotRun(load) ? '' : String(load.median.clients));

function loadRow(label: string, name: string, load: Maybe<ServeLoad>, checked = 'every answer checked'): Row {
  if (isNotRun(load)) return [label, name, '', '', '', '', '', '', `not run: ${load.notRun}`];
  const run = load.median;
  const l = run.latencyMs;
  const kinds = Object.values(run.byKind);
  const short = kinds.reduce((sum, k) => sum + k.short, 0);
  const note = [
    `p50 ${l.p50} / p95 ${l.p95} / p99 ${l.p99} ms`,
    run.failed > 0 ? `${run.failed} FAILED (${run.failures[0] ?? ''})` : checked,
    short > 0 ? `${short} at a list's end` : '',
    `${Math.round(run.meanBodyBytes / 1000)} kB an answer`,
    coresNote(run.cpu),
    load.answersPerSecond.length > 1 ? `median of ${load.answersPerSecond.join(', ')} a second` : '',
  ];
  return [
    label,
    name,
    String(run.answers),
    secs(run.durationMs),
    '',
    String(run.answersPerSecond),
    '',
    '',
    note.filter(Boolean).join('; '),
  ];
}

function feedRow(label: string, phase: Maybe<FeedPhaseFigures>): Row {
  if (isNotRun(phase)) return [label, 'feed', '', '', '', '', '', '', `not run: ${phase.notRun}`];
  const l = phase.commitToClientMs;
  const note = [
    `commit to client p50 ${l.p50} / p95 ${l.p95} / max ${l.max} ms (to the first client p50 ${phase.commitToFirstClientMs.p50} ms)`,
    `${phase.completeClients} of ${phase.clients} clients got every event`,
    `${phase.matchedCommits} of ${phase.commits} commits timed`,
    `${phase.databaseListeners} database listener(s)`,
    `bench loop delay p99 ${phase.benchLoopDelayP99Ms} ms`,
    `sync ${secs(median(phase.syncWallMs))} a tail`,
    coresNote(phase.cpu),
  ];
  return [
    label,
    `feed, ${phase.clients} SSE clients, ${phase.rounds} tails of ${phase.recordsPerRound}`,
    String(phase.events),
    '',
    '',
    '',
    '',
    mb(phase.servePeakRssBytes),
    note.join('; '),
  ];
}

/** The cores each group kept busy, the machine's beside them. */
function coresNote(cpu: CoresUsed): string {
  const names: Record<string, string> = {
    serve: 'serve',
    database: 'PostgreSQL',
    bench: 'bench',
    server: 'server',
  };
  const groups = Object.entries(cpu.groups).map(([group, cores]) => `${names[group] ?? group} ${cores}`);
  return `cores: ${groups.join(', ')}, machine ${cpu.machine} of ${cpu.cores}`;
}

function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor((sorted.length - 1) / 2)] ?? 0;
}

/**
 * The targets of the mirror served, one set per run whatever failed (a figure not
 * measured is judged null); none when the scenario was not selected (`sizes` null).
 */
export function judgeServeTargets(
  figures: Maybe<ServeFigures> | undefined,
  sizes: ServeOptions | null,
): Target[] {
  if (sizes === null || figures === undefined) return [];
  const targets: Target[] = [];
  const add = (name: string, target: string, value: number | null, ok: (v: number) => boolean) =>
    targets.push({ name, target, value, met: value === null ? null : ok(value) });
  const served = isNotRun(figures) ? null : figures;
  const clean = (load: Maybe<ServeLoad> | undefined) =>
    load === undefined || isNotRun(load) || load.median.failed > 0 ? null : load.median;
  const lists = clean(served?.lists);
  const lookups = clean(served?.lookups);
  const clients = sizes.clients;
  add(
    `list answers by key a second, ${clients} clients`,
    '>= 1000',
    lists?.answersPerSecond ?? null,
    (v) => v >= 1000,
  );
  add(
    `list answers by key, ${clients} clients, p99 (ms)`,
    '<= 100',
    lists?.latencyMs.p99 ?? null,
    (v) => v <= 100,
  );
  add(
    `look-ups by hash a second, ${clients} clients`,
    '>= 5000',
    lookups?.answersPerSecond ?? null,
    (v) => v >= 5000,
  );
  const phases = sizes.feedClients.map((n, i) => {
    const phase = served?.feed[i];
    return { n, phase: phase === undefined || isNotRun(phase) ? null : phase };
  });
  for (const { n, phase } of phases) {
    const timed = phase !== null && phase.commits > 0 && phase.matchedCommits === phase.commits;
    add(
      `feed commit to client p95 (ms), ${n} SSE clients`,
      '<= 500',
      timed ? phase.commitToClientMs.p95 : null,
      (v) => v <= 500,
    );
  }
  const { n, phase: most } = phases.reduce((a, p) => (p.n > a.n ? p : a));
  add(
    `peak RSS of serve with ${n} SSE clients (MB)`,
    '<= 300',
    most?.servePeakRssBytes ? round(most.servePeakRssBytes / 1e6, 1) : null,
    (v) => v <= 300,
  );
  add(
    `database listeners of serve with ${n} SSE clients`,
    '= 1',
    most?.databaseListeners ?? null,
    (v) => v === 1,
  );
  add(
    `SSE clients that got every event, ${n} clients (share)`,
    '= 1',
    most ? round(most.completeClients / most.clients) : null,
    (v) => v === 1,
  );
  return targets;
}
