import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { SinkStatus } from '../../src/db/queries/sink-status.js';
import type { FeedConsumer } from '../../src/feed/feed-consumers.js';
import { feedSection } from '../../src/http/feed-section.js';

const NOW = new Date('2026-11-25T12:30:20.000Z');

function sink(overrides: Partial<SinkStatus> = {}): SinkStatus {
  return {
    name: 'webhook',
    kind: 'webhook',
    filter: {},
    position: 1200,
    lagPositions: 0,
    lagSeconds: 0,
    deliveredEvents: 1180,
    deliveredAt: new Date(NOW.getTime() - 5_000),
    lastError: null,
    lastErrorAt: null,
    deliveredBy: 'sink:host:42:abc',
    deadLetters: 0,
    ...overrides,
  };
}

/** The text of the cell of class `name` in the row of sink `sinkName`. */
function cell(html: string, sinkName: string, name: string): string {
  const row = new RegExp(`<tr class="sink" data-sink="${sinkName}">(.*?)</tr>`).exec(html)?.[1] ?? '';
  const found = new RegExp(`<td class="[^"]*\\b${name}\\b[^"]*">(.*?)</td>`).exec(row)?.[1];
  return (found ?? '').replace(/<[^>]+>/g, '');
}

describe('status page: the change feed section', () => {
  it('shows the head and each sink at the head, with what it delivered and nothing bad', () => {
    const html = feedSection({ head: 1200, horizon: 0, unstamped: 0, sinks: [sink()] }, [], NOW);
    assert.match(html, /head at position <b>1,200<\/b>/);
    assert.equal(cell(html, 'webhook', 'position'), '1,200');
    assert.equal(cell(html, 'webhook', 'lag'), 'at the head');
    assert.equal(cell(html, 'webhook', 'delivered'), '1,180 events, last 5 s ago');
    assert.equal(cell(html, 'webhook', 'dead-letters'), '0');
    assert.equal(cell(html, 'webhook', 'last-error'), 'none');
    assert.doesNotMatch(html, /class="[^"]*\bbad\b/);
  });

  it('shows a sink behind the head, its dead letters and last error marked, escaped', () => {
    const behind = sink({
      name: 'hook<1>',
      filter: { action: 'burn' },
      lagPositions: 300,
      lagSeconds: 125,
      deadLetters: 2,
      lastError: 'POST https://x/ answered HTTP 503: <b>down</b>',
      lastErrorAt: new Date(NOW.getTime() - 60_000),
      deliveredBy: null,
    });
    const html = feedSection({ head: 1500, horizon: 1000, unstamped: 0, sinks: [behind] }, [], NOW);
    assert.match(html, /events kept after position 1,000/);
    assert.ok(html.includes('data-sink="hook&lt;1&gt;"'));
    assert.ok(!html.includes('<b>down</b>'));
    assert.match(html, /<td class="lag bad">300 positions behind \(oldest 2 min old\)<\/td>/);
    assert.match(html, /<td class="num dead-letters bad">2<\/td>/);
    assert.match(
      html,
      /<td class="last-error bad">POST https:\/\/x\/ answered HTTP 503: &lt;b&gt;down&lt;\/b&gt; /,
    );
    assert.match(html, /\(1 min ago\)/);
    assert.match(html, /<td class="filter">action=burn<\/td>/);
    assert.match(html, /<td class="delivered-by">nobody now<\/td>/);
  });

  it('says how to set a sink up when none has run, and that no one reads the feed here', () => {
    const html = feedSection({ head: 0, horizon: 0, unstamped: 0, sinks: [] }, [], NOW);
    assert.match(html, /No sink has run: set <code>LEDGER_WEBHOOK_URL<\/code>/);
    assert.match(html, /No one reads the feed from this process now/);
    assert.doesNotMatch(html, /<table/);
  });

  it('shows the readers of this process’s feed with their position and lag', () => {
    const readers: FeedConsumer[] = [
      {
        name: 'reporting',
        mode: 'poll',
        remote: '10.0.0.7',
        filter: { action: 'burn' },
        position: 1100,
        since: new Date(NOW.getTime() - 30_000),
        live: false,
      },
      {
        name: null,
        mode: 'sse',
        remote: '127.0.0.1',
        filter: {},
        position: 1200,
        since: new Date(NOW.getTime() - 600_000),
        live: true,
      },
    ];
    const html = feedSection({ head: 1200, horizon: 0, unstamped: 0, sinks: [] }, readers, NOW);
    const rows = [...html.matchAll(/<tr class="feed-reader">(.*?)<\/tr>/g)].map((m) =>
      (m[1] ?? '').replace(/<\/td>/g, ' | ').replace(/<[^>]+>/g, ''),
    );
    assert.deepEqual(rows, [
      'reporting | poll | 10.0.0.7 | action=burn | 1,100 | 100 positions behind | 30 s ago | ',
      'unnamed | stream | 127.0.0.1 | every event | 1,200 | at the head | 10 min ago | ',
    ]);
  });
});
