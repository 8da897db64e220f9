/**
 * The status page at `/`: what a person reads at a glance, rendered on the server from the data
 * `/status` answers. Pure: data in, an HTML string out; no script, so nothing runs in the reader's
 * browser and the page works offline.
 */
import type { FeedStatus } from '../db/queries/sink-status.js';
import type { FeedConsumer } from '../feed/feed-consumers.js';
import { feedSection } from './feed-section.js';
import { ago, escapeHtml, formatCount, formatDuration, formatTime } from './html.js';
import { type MinuteRate, throughputSvg } from './throughput-chart.js';

/** One stream's row. */
export interface StreamRow {
  key: string;
  watermark: number | null;
  /** Pages walked of the largest `totalPages` seen, for a walk in progress. */
  backfill: { pagesDone: number; totalPages: number; cursor?: number | undefined } | null;
  /** 0 to 1, as the `stream_backfill_progress_ratio` gauge. */
  progress: number;
  /** The dialect the list is read in, in a few words (`key, count 100`, `page`, `-`). */
  readBy: string;
  /** The pages the stream's latest run committed, in a few words (`12 pages`, `-`). */
  lastRun: string;
  complete: boolean;
  /** Why it is not complete (empty when it is). */
  missing: string[];
  /** RawIds behind the service's head as last seen (or the head of a walk in progress). */
  lagRawIds: number | null;
  /** When the head of `lagRawIds` was seen at the service; null for a walk's head never stored. */
  headSeenAt: Date | null;
  /** Why the service's head could not be read now, when it was asked. */
  headError: string | null;
  /** Age of the newest record at or below the watermark. */
  lagSeconds: number | null;
  lastSuccessAt: Date | null;
  errorStreak: number;
  lastError: string | null;
  nonFinal: number;
  rejected: number;
  conflicts: number;
}

/** The latest `verify` run. */
export interface LastVerify {
  startedAt: Date;
  finishedAt: Date;
  complete: boolean;
  summary: {
    streams: number;
    incompleteStreams: string[];
    conflicts: number;
    integrityMismatches: number;
    balanceDifferences: number | null;
  };
}

/** One queue's depth. */
export interface QueueRow {
  queue: string;
  waiting: number;
  delayed: number;
  active: number;
  failed: number;
  paused: boolean;
}

/** Everything the page shows. */
export interface StatusPageData {
  now: Date;
  /** The database, safe to show (no password). */
  database: string;
  refreshSeconds: number;
  totals: {
    records: number;
    newestRawId: number | null;
    /** Records waiting for a re-read (not final yet), and of those the ones due now. */
    nonFinal: number;
    nonFinalDue: number;
    rejected: number;
    conflicts: number;
  };
  streams: StreamRow[];
  throughput: MinuteRate[];
  lastVerify: LastVerify | null;
  /** `null`: no queues to show (no Redis); `{ error }`: they could not be read. */
  queues: { queues: QueueRow[] } | { error: string } | null;
  /** The change feed's head and its sinks. */
  feed: FeedStatus;
  /** Who reads the change feed from this process now, furthest behind first. */
  feedReaders: FeedConsumer[];
}

/** The whole page. */
export function renderStatusPage(data: StatusPageData): string {
  const ready = data.streams.length > 0 && data.streams.every((s) => s.complete);
  const headline =
    data.streams.length === 0
      ? 'no stream synced yet'
      : ready
        ? 'every stream complete'
        : `${data.streams.filter((s) => !s.complete).length} of ${data.streams.length} stream(s) not complete`;
  return page({
    title: 'ledger-indexer status',
    refreshSeconds: data.refreshSeconds,
    body: [
      `<header><h1>ledger-indexer</h1><p class="headline ${ready ? 'ok' : 'bad'}" id="headline">${escapeHtml(headline)}</p>`,
      `<p class="meta">${escapeHtml(data.database)} · ${escapeHtml(formatTime(data.now))} · refreshes every ${data.refreshSeconds} s</p></header>`,
      totalsSection(data),
      throughputSection(data.throughput),
      streamsSection(data),
      feedSection(data.feed, data.feedReaders, data.now),
      verifySection(data.lastVerify, data.now),
      queuesSection(data.queues),
      footer(),
    ].join('\n'),
  });
}

/** The page shown when the data cannot be read (the database failed or is behind the code). */
export function renderUnavailablePage(input: { reason: string; now: Date; refreshSeconds: number }): string {
  return page({
    title: 'ledger-indexer status: unavailable',
    refreshSeconds: input.refreshSeconds,
    body: [
      '<header><h1>ledger-indexer</h1><p class="headline bad" id="headline">status unavailable</p>',
      `<p class="meta">${escapeHtml(formatTime(input.now))} · refreshes every ${input.refreshSeconds} s</p></header>`,
      `<section><p class="error">${escapeHtml(input.reason)}</p></section>`,
      footer(),
    ].join('\n'),
  });
}

function totalsSection(data: StatusPageData): string {
  const t = data.totals;
  const cells: Array<[string, string, boolean]> = [
    ['records stored', formatCount(t.records), false],
    ['newest rawId', formatCount(t.newestRawId), false],
    [
      'not final yet (re-read backlog)',
      `${formatCount(t.nonFinal)} (${formatCount(t.nonFinalDue)} due)`,
      false,
    ],
    ['rejected records', formatCount(t.rejected), t.rejected > 0],
    ['conflicts', formatCount(t.conflicts), t.conflicts > 0],
  ];
  const items = cells
    .map(
      ([label, value, bad]) =>
        `<div class="tile${bad ? ' bad' : ''}"><span>${label}</span><b>${value}</b></div>`,
    )
    .join('');
  return `<section class="tiles" id="totals">${items}</section>`;
}

function throughputSection(series: readonly MinuteRate[]): string {
  const total = series.reduce((sum, m) => sum + m.records, 0);
  const peak = series.reduce((best, m) => Math.max(best, m.perSecond), 0);
  return `<section id="throughput-section"><h2>Records stored per second, last hour (per minute, UTC)</h2>
${throughputSvg(series)}
<p class="meta">${formatCount(total)} records in the last hour; peak ${peak.toFixed(1)}/s</p></section>`;
}

function streamsSection(data: StatusPageData): string {
  if (data.streams.length === 0)
    return '<section id="streams"><h2>Streams</h2><p>No stream synced yet: run <code>ledger-indexer sync</code> or schedule it.</p></section>';
  const head =
    '<tr><th>stream</th><th>progress</th><th>watermark</th><th>read by</th><th>last run</th><th>lag</th><th>last success</th><th>errors</th><th>not final</th><th>rejected</th><th>conflicts</th></tr>';
  const rows = data.streams.map((s) => streamRow(s, data.now)).join('\n');
  return `<section id="streams"><h2>Streams</h2><table><thead>${head}</thead><tbody>\n${rows}\n</tbody></table></section>`;
}

function streamRow(s: StreamRow, now: Date): string {
  const cells = [
    `<td class="key">${escapeHtml(s.key)}</td>`,
    `<td>${progressCell(s)}</td>`,
    `<td class="num">${formatCount(s.watermark)}</td>`,
    `<td class="read-by">${escapeHtml(s.readBy)}</td>`,
    `<td class="last-run">${escapeHtml(s.lastRun)}</td>`,
    `<td>${lagCell(s, now)}</td>`,
    `<td>${s.lastSuccessAt === null ? 'never' : `<span title="${escapeHtml(formatTime(s.lastSuccessAt))}">${escapeHtml(ago(s.lastSuccessAt, now))}</span>`}</td>`,
    `<td${s.errorStreak > 0 ? ' class="bad"' : ''}>${s.errorStreak > 0 ? `${s.errorStreak} in a row: ${escapeHtml(s.lastError ?? '')}` : 'none'}</td>`,
    `<td class="num">${formatCount(s.nonFinal)}</td>`,
    `<td class="num${s.rejected > 0 ? ' bad' : ''}">${formatCount(s.rejected)}</td>`,
    `<td class="num${s.conflicts > 0 ? ' bad' : ''}">${formatCount(s.conflicts)}</td>`,
  ];
  return `<tr class="stream" data-stream="${escapeHtml(s.key)}">${cells.join('')}</tr>`;
}

function progressCell(s: StreamRow): string {
  const percent = Math.round(s.progress * 100);
  const bar = `<progress max="100" value="${percent}">${percent}%</progress>`;
  const pages = !s.backfill
    ? ''
    : s.backfill.cursor !== undefined
      ? ` by key, at rawId ${formatCount(s.backfill.cursor)}`
      : ` page ${formatCount(s.backfill.pagesDone)} of ${formatCount(s.backfill.totalPages)}`;
  if (s.complete) return `<span class="badge ok">complete</span>${s.backfill ? ` tailing:${pages}` : ''}`;
  const why = s.missing.map((m) => `<li>${escapeHtml(m)}</li>`).join('');
  return `<span class="badge bad">not complete</span> ${bar} ${percent}%${pages}${why ? `<ul class="missing">${why}</ul>` : ''}`;
}

function lagCell(s: StreamRow, now: Date): string {
  const parts: string[] = [];
  if (s.headError !== null) parts.push(`<span class="bad">head unknown: ${escapeHtml(s.headError)}</span>`);
  if (s.lagRawIds !== null && s.headSeenAt !== null)
    parts.push(
      `${formatCount(s.lagRawIds)} rawIds behind the service (head seen ${escapeHtml(ago(s.headSeenAt, now))})`,
    );
  // A head never seen at the service: only a walk in progress says how far it has to go.
  else if (s.lagRawIds !== null && s.lagRawIds > 0)
    parts.push(`${formatCount(s.lagRawIds)} rawIds to the head of the walk in progress`);
  if (s.lagSeconds !== null) parts.push(`newest record ${escapeHtml(formatDuration(s.lagSeconds))} old`);
  return parts.length > 0 ? parts.join('<br>') : '—';
}

function verifySection(run: LastVerify | null, now: Date): string {
  if (run === null)
    return '<section id="verify"><h2>Last verify</h2><p id="verify-outcome">never run: <code>ledger-indexer verify</code> records its outcome here</p></section>';
  const s = run.summary;
  const findings = [
    `${s.streams - s.incompleteStreams.length} of ${s.streams} stream(s) complete`,
    ...(s.incompleteStreams.length > 0
      ? [`incomplete: ${s.incompleteStreams.map(escapeHtml).join(', ')}`]
      : []),
    `${formatCount(s.conflicts)} conflict(s)`,
    `${formatCount(s.integrityMismatches)} record(s) not what their sender signed`,
    ...(s.balanceDifferences === null ? [] : [`${formatCount(s.balanceDifferences)} balance difference(s)`]),
  ];
  const took = formatDuration((run.finishedAt.getTime() - run.startedAt.getTime()) / 1000);
  return `<section id="verify"><h2>Last verify</h2>
<p id="verify-outcome"><span class="badge ${run.complete ? 'ok' : 'bad'}">${run.complete ? 'complete' : 'incomplete'}</span>
finished <span title="${escapeHtml(formatTime(run.finishedAt))}">${escapeHtml(ago(run.finishedAt, now))}</span> (${escapeHtml(formatTime(run.finishedAt))}, took ${escapeHtml(took)})</p>
<ul>${findings.map((f) => `<li>${f}</li>`).join('')}</ul></section>`;
}

function queuesSection(queues: StatusPageData['queues']): string {
  if (queues === null) return '';
  if ('error' in queues)
    return `<section id="queues"><h2>Queues</h2><p class="bad">${escapeHtml(queues.error)}</p></section>`;
  const rows = queues.queues
    .map(
      (q) =>
        `<tr><td class="key">${escapeHtml(q.queue)}${q.paused ? ' (paused)' : ''}</td><td class="num">${formatCount(q.waiting)}</td><td class="num">${formatCount(q.delayed)}</td><td class="num">${formatCount(q.active)}</td><td class="num${q.failed > 0 ? ' bad' : ''}">${formatCount(q.failed)}</td></tr>`,
    )
    .join('\n');
  return `<section id="queues"><h2>Queues</h2><table><thead><tr><th>queue</th><th>waiting</th><th>delayed</th><th>active</th><th>failed</th></tr></thead><tbody>
${rows}
</tbody></table></section>`;
}

function footer(): string {
  const links = ['/health', '/ready', '/status', '/metrics']
    .map((p) => `<a href="${p}">${p}</a>`)
    .join(' · ');
  return `<footer>${links}</footer>`;
}

const STYLE = `body{font:14px/1.4 system-ui,sans-serif;margin:1.5rem;color:#1d2330;background:#fafbfc}
h1{font-size:1.3rem;margin:0}h2{font-size:1rem;margin:1.2rem 0 .4rem}
.headline{font-weight:600;margin:.2rem 0}.meta{color:#667;margin:.2rem 0}
.ok{color:#17693a}.bad{color:#b3261e}.error{color:#b3261e;font-weight:600}
.tiles{display:flex;flex-wrap:wrap;gap:.6rem}.tile{background:#fff;border:1px solid #dde;border-radius:6px;padding:.5rem .8rem}
.tile span{display:block;color:#667;font-size:.8rem}.tile b{font-size:1.2rem}
table{border-collapse:collapse;background:#fff}th,td{border:1px solid #dde;padding:.3rem .5rem;text-align:left;vertical-align:top}
td.num{text-align:right;font-variant-numeric:tabular-nums}td.key{font-family:ui-monospace,monospace;word-break:break-all}
.badge{display:inline-block;border-radius:4px;padding:0 .4rem;color:#fff}.badge.ok{background:#17693a}.badge.bad{background:#b3261e}
ul.missing{margin:.2rem 0 0 1rem;padding:0;color:#b3261e}
#throughput{background:#fff;border:1px solid #dde;max-width:100%;height:auto}
#throughput .grid{stroke:#e3e6ec}#throughput .axis{font-size:11px;fill:#667}
#throughput .area{fill:#3b6fd433}#throughput .series{fill:none;stroke:#3b6fd4;stroke-width:2}
footer{margin-top:1.5rem;color:#667}`;

function page(input: { title: string; refreshSeconds: number; body: string }): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta http-equiv="refresh" content="${input.refreshSeconds}">
<link rel="icon" href="data:,">
<title>${escapeHtml(input.title)}</title>
<style>${STYLE}</style>
</head>
<body>
${input.body}
</body>
</html>
`;
}
