/** The status page's section on the change feed: its head, and each sink's standing. Pure. */
import type { FeedStatus, SinkStatus } from '../db/queries/sink-status.js';
import { ago, escapeHtml, formatCount, formatDuration, formatTime } from './html.js';

/** The section: the head, then a row per sink (or how to set one up). */
export function feedSection(feed: FeedStatus, now: Date): string {
  const head = `<p class="meta" id="feed-head">head at position <b>${formatCount(feed.head)}</b>${
    feed.horizon > 0 ? ` · events kept after position ${formatCount(feed.horizon)}` : ''
  } · <a href="/feed">/feed</a></p>`;
  if (feed.sinks.length === 0) {
    return `<section id="feed"><h2>Change feed and sinks</h2>${head}
<p>No sink has run: set <code>LEDGER_WEBHOOK_URL</code> and <code>LEDGER_WEBHOOK_SECRET</code> to deliver the feed to a webhook.</p></section>`;
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
  const rows = feed.sinks.map((s) => sinkRow(s, now)).join('\n');
  return `<section id="feed"><h2>Change feed and sinks</h2>${head}
<table><thead><tr>${columns.map((c) => `<th>${c}</th>`).join('')}</tr></thead><tbody>
${rows}
</tbody></table></section>`;
}

function sinkRow(s: SinkStatus, now: Date): string {
  const filter = Object.entries(s.filter).map(([key, value]) => `${key}=${value}`);
  const behind = s.lagPositions > 0;
  const cells = [
    `<td class="sink-name"><code>${escapeHtml(s.name)}</code></td>`,
    `<td>${escapeHtml(s.kind)}</td>`,
    `<td class="filter">${filter.length > 0 ? escapeHtml(filter.join(' ')) : 'every event'}</td>`,
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
