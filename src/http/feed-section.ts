/** The status page's section on the change feed: its head, each sink's standing, this process's readers. Pure. */
import type { FeedStatus, SinkStatus } from '../db/queries/sink-status.js';
import type { FeedConsumer } from '../feed/feed-consumers.js';
import { ago, escapeHtml, formatCount, formatDuration, formatTime } from './html.js';

/** The section: the head, a row per sink (or how to set one up), then the readers of this process's feed. */
export function feedSection(feed: FeedStatus, readers: readonly FeedConsumer[], now: Date): string {
  const head = `<p class="meta" id="feed-head">head at position <b>${formatCount(feed.head)}</b>${
    feed.horizon > 0 ? ` · events kept after position ${formatCount(feed.horizon)}` : ''
  } · <a href="/feed">/feed</a></p>`;
  return `<section id="feed"><h2>Change feed and sinks</h2>${head}
${sinksTable(feed.sinks, now)}
${readersTable(readers, feed.head, now)}</section>`;
}

function sinksTable(sinks: readonly SinkStatus[], now: Date): string {
  if (sinks.length === 0) {
    return '<p id="no-sinks">No sink has run: set <code>LEDGER_WEBHOOK_URL</code> and <code>LEDGER_WEBHOOK_SECRET</code> (or <code>LEDGER_NATS_URL</code>) to deliver the feed.</p>';
  }
  const columns = [
    'sink',
    'kind',
    'filter',
    'position',
    'lag',
    'delivered',
    'dead letters',
    'last error',
    'delivered by',
  ];
  return table(
    'sinks',
    columns,
    sinks.map((s) => sinkRow(s, now)),
  );
}

/** This process's readers: live SSE streams, and long polls that named themselves (`?consumer=`). */
function readersTable(readers: readonly FeedConsumer[], head: number, now: Date): string {
  if (readers.length === 0) {
    return '<p class="meta" id="no-feed-readers">No one reads the feed from this process now.</p>';
  }
  const columns = ['reader', 'mode', 'from', 'filter', 'position', 'lag', 'since'];
  const rows = readers.map((r) => {
    const behind = Math.max(0, head - r.position);
    const cells = [
      `<td class="key">${r.name === null ? '<i>unnamed</i>' : escapeHtml(r.name)}</td>`,
      `<td>${r.mode === 'sse' ? 'stream' : `poll${r.live ? ', waiting' : ''}`}</td>`,
      `<td>${escapeHtml(r.remote)}</td>`,
      `<td class="filter">${filterText(r.filter)}</td>`,
      `<td class="num position">${formatCount(r.position)}</td>`,
      `<td class="lag">${behind > 0 ? `${formatCount(behind)} positions behind` : 'at the head'}</td>`,
      `<td><span title="${escapeHtml(formatTime(r.since))}">${escapeHtml(ago(r.since, now))}</span></td>`,
    ];
    return `<tr class="feed-reader">${cells.join('')}</tr>`;
  });
  return table('feed-readers', columns, rows);
}

function table(id: string, columns: readonly string[], rows: readonly string[]): string {
  return `<table id="${id}"><thead><tr>${columns.map((c) => `<th>${c}</th>`).join('')}</tr></thead><tbody>
${rows.join('\n')}
</tbody></table>`;
}

/** `action=burn tokenTag=…`, or `every event`. */
function filterText(filter: object): string {
  const set = Object.entries(filter).filter(([, value]) => value !== undefined && value !== null);
  return set.length > 0 ? escapeHtml(set.map(([key, value]) => `${key}=${value}`).join(' ')) : 'every event';
}

function sinkRow(s: SinkStatus, now: Date): string {
  const behind = s.lagPositions > 0;
  const cells = [
    `<td class="sink-name"><code>${escapeHtml(s.name)}</code></td>`,
    `<td>${escapeHtml(s.kind)}</td>`,
    `<td class="filter">${filterText(s.filter)}</td>`,
    `<td class="num position">${formatCount(s.position)}</td>`,
    `<td class="lag${s.lagSeconds >= 60 ? ' bad' : ''}">${
      behind
        ? `${formatCount(s.lagPositions)} positions behind (oldest ${escapeHtml(formatDuration(s.lagSeconds))} old)`
        : 'at the head'
    }</td>`,
    `<td class="delivered">${formatCount(s.deliveredEvents)} events${
      s.deliveredAt === null ? '' : `, last ${escapeHtml(ago(s.deliveredAt, now))}`
    }</td>`,
    `<td class="num dead-letters${s.deadLetters > 0 ? ' bad' : ''}">${formatCount(s.deadLetters)}</td>`,
    `<td class="last-error${s.lastError !== null ? ' bad' : ''}">${lastError(s, now)}</td>`,
    `<td class="delivered-by">${s.deliveredBy === null ? 'nobody now' : escapeHtml(s.deliveredBy)}</td>`,
  ];
  return `<tr class="sink" data-sink="${escapeHtml(s.name)}">${cells.join('')}</tr>`;
}

function lastError(s: SinkStatus, now: Date): string {
  if (s.lastError === null) return 'none';
  const when =
    s.lastErrorAt === null
      ? ''
      : ` <span class="meta" title="${escapeHtml(formatTime(s.lastErrorAt))}">(${escapeHtml(ago(s.lastErrorAt, now))})</span>`;
  return `${escapeHtml(s.lastError)}${when}`;
}
