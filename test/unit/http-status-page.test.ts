import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { escapeHtml, formatDuration } from '../../src/http/html.js';
import {
  renderStatusPage,
  renderUnavailablePage,
  type StatusPageData,
  type StreamRow,
} from '../../src/http/status-page.js';
import { axisMax, minuteSeries, throughputSvg } from '../../src/http/throughput-chart.js';

const NOW = new Date('2026-11-25T12:30:20.000Z');

function stream(overrides: Partial<StreamRow> = {}): StreamRow {
  return {
    key: 'txs',
    watermark: 1234,
    backfill: null,
    progress: 1,
    readBy: 'key, count 100',
    lastRun: '2 pages',
    complete: true,
    missing: [],
    lagRawIds: 0,
    headSeenAt: new Date(NOW.getTime() - 4_000),
    headError: null,
    lagSeconds: 42,
    lastSuccessAt: new Date(NOW.getTime() - 90_000),
    errorStreak: 0,
    lastError: null,
    nonFinal: 3,
    rejected: 0,
    conflicts: 0,
    ...overrides,
  };
}

function data(overrides: Partial<StatusPageData> = {}): StatusPageData {
  return {
    now: NOW,
    database: 'postgres://app:***@db/ledger',
    refreshSeconds: 10,
    totals: { records: 12_345, newestRawId: 1234, nonFinal: 3, nonFinalDue: 1, rejected: 0, conflicts: 0 },
    streams: [stream()],
    throughput: minuteSeries(
      [{ minuteMs: Math.floor(NOW.getTime() / 60_000) * 60_000, records: 400 }],
      NOW.getTime(),
    ),
    lastVerify: null,
    queues: null,
    feed: { head: 0, horizon: 0, unstamped: 0, sinks: [] },
    feedReaders: [],
    ...overrides,
  };
}

/** The `d` of the chart's line, as [x, y] points. */
function linePoints(html: string): Array<[number, number]> {
  const d = /<path class="series"[^>]* d="([^"]*)"/.exec(html)?.[1] ?? '';
  return [...d.matchAll(/(-?[\d.]+),(-?[\d.]+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
}

describe('status page: minute series', () => {
  it('fills the minutes without a record with zero, oldest first, the current minute last', () => {
    const now = Date.parse('2026-11-25T12:30:15Z');
    const series = minuteSeries(
      [
        { minuteMs: Date.parse('2026-11-25T12:28:00Z'), records: 120 },
        { minuteMs: Date.parse('2026-11-25T12:30:00Z'), records: 30 },
        { minuteMs: Date.parse('2026-11-25T11:00:00Z'), records: 999 }, // outside the hour
      ],
      now,
    );
    assert.equal(series.length, 60);
    assert.equal(series[0]?.startMs, Date.parse('2026-11-25T11:31:00Z'));
    assert.deepEqual(series[57], { startMs: Date.parse('2026-11-25T12:28:00Z'), records: 120, perSecond: 2 });
    assert.equal(series[58]?.records, 0);
    // The current minute: 30 records in the 15 s elapsed.
    assert.deepEqual(series[59], { startMs: Date.parse('2026-11-25T12:30:00Z'), records: 30, perSecond: 2 });
    assert.equal(
      series.reduce((sum, m) => sum + m.records, 0),
      150,
    );
  });

  it('rounds the axis up to 1, 2 or 5 times a power of ten', () => {
    assert.deepEqual([0, 0.3, 1, 1.5, 3, 7, 11, 260].map(axisMax), [1, 1, 1, 2, 5, 10, 20, 500]);
  });
});

describe('status page: the chart', () => {
  it('draws one point per minute, the busy minute at the top and the quiet ones on the baseline', () => {
    const series = minuteSeries(
      [{ minuteMs: Date.parse('2026-11-25T12:29:00Z'), records: 600 }],
      NOW.getTime(),
    );
    const svg = throughputSvg(series);
    const points = linePoints(svg);
    assert.equal(points.length, 60);
    assert.match(svg, /data-points="60" data-total="600"/);
    const ys = points.map(([, y]) => y);
    const baseline = Math.max(...ys);
    assert.equal(ys.filter((y) => y < baseline).length, 1, 'one minute above the baseline');
    assert.equal(Math.min(...ys), 10, '10/s is the top of an axis of 10');
    assert.match(svg, />10<\/text>/);
  });

  it('stays flat on the baseline without records', () => {
    const points = linePoints(throughputSvg(minuteSeries([], NOW.getTime())));
    assert.equal(new Set(points.map(([, y]) => y)).size, 1);
  });
});

describe('status page: a walk by key', () => {
  it('says how far up the rawIds a backfill by key is', () => {
    const html = renderStatusPage(
      data({
        streams: [
          stream({
            watermark: null,
            complete: false,
            progress: 0.5,
            backfill: { pagesDone: 0, totalPages: 0, cursor: 5000 },
            missing: ['backfill in progress: by key at rawId 5000'],
          }),
        ],
      }),
    );
    const row = /<tr class="stream" data-stream="txs">.*<\/tr>/.exec(html)?.[0] ?? '';
    assert.match(row, /by key, at rawId 5,000/);
    assert.doesNotMatch(row, /page 0 of 0/);
  });
});

describe('status page: the page', () => {
  it('shows each stream with its progress, watermark, lag and counts, and the totals', () => {
    const html = renderStatusPage(
      data({
        streams: [
          stream(),
          stream({
            key: 'account:0xabc',
            watermark: null,
            complete: false,
            progress: 0.3,
            backfill: { pagesDone: 12, totalPages: 40 },
            missing: ['backfill in progress: page 12 of 40'],
            lagRawIds: 55,
            headSeenAt: null,
            rejected: 2,
            readBy: 'page',
            lastRun: '3 pages, running',
          }),
        ],
      }),
    );
    assert.match(html, /<meta http-equiv="refresh" content="10">/);
    assert.match(html, /1 of 2 stream\(s\) not complete/);
    assert.match(html, /data-stream="txs"[^\n]*badge ok">complete/);
    const second = /<tr class="stream" data-stream="account:0xabc">.*<\/tr>/.exec(html)?.[0] ?? '';
    assert.match(second, /<progress max="100" value="30">/);
    assert.match(second, /page 12 of 40/);
    assert.match(second, /backfill in progress: page 12 of 40/);
    assert.match(second, /55 rawIds to the head of the walk in progress/);
    const first = /<tr class="stream" data-stream="txs">.*<\/tr>/.exec(html)?.[0] ?? '';
    assert.match(first, /0 rawIds behind the service \(head seen 4 s ago\)/);
    assert.match(first, /<td class="read-by">key, count 100<\/td><td class="last-run">2 pages<\/td>/);
    assert.match(second, /<td class="read-by">page<\/td><td class="last-run">3 pages, running<\/td>/);
    assert.match(second, /<td class="num bad">2<\/td>/);
    assert.match(html, /12,345/);
    assert.match(html, /3 \(1 due\)/);
    assert.match(html, /1 min ago/);
    assert.match(html, /400 records in the last hour/);
    for (const path of ['/health', '/ready', '/status', '/metrics'])
      assert.ok(html.includes(`href="${path}"`));
    assert.ok(!html.includes('<script'), 'no script');
  });

  it('says nothing of a walk lag when no walk is in progress and the service was not asked', () => {
    const html = renderStatusPage(data({ streams: [stream({ lagRawIds: 0, headSeenAt: null })] }));
    assert.ok(!html.includes('rawIds'), 'no lag in rawIds');
    assert.match(html, /newest record 42 s old/);
  });

  it('escapes every value it is given', () => {
    const evil = `<script>alert("x")</script>&'`;
    const html = renderStatusPage(
      data({
        database: evil,
        streams: [
          stream({
            key: evil,
            complete: false,
            missing: [evil],
            lastError: evil,
            errorStreak: 1,
            headError: evil,
          }),
        ],
        lastVerify: {
          startedAt: NOW,
          finishedAt: NOW,
          complete: false,
          summary: {
            streams: 1,
            incompleteStreams: [evil],
            conflicts: 0,
            integrityMismatches: 0,
            balanceDifferences: null,
          },
        },
        queues: { error: evil },
      }),
    );
    assert.ok(!html.includes('<script>'), 'no raw markup from the data');
    assert.ok(html.includes('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;&amp;&#39;'));
    assert.ok(!renderUnavailablePage({ reason: evil, now: NOW, refreshSeconds: 5 }).includes('<script>'));
  });

  it('shows the last verify, or that none ran', () => {
    assert.match(renderStatusPage(data()), /id="verify-outcome">never run/);
    const html = renderStatusPage(
      data({
        lastVerify: {
          startedAt: new Date(NOW.getTime() - 200_000),
          finishedAt: new Date(NOW.getTime() - 180_000),
          complete: false,
          summary: {
            streams: 2,
            incompleteStreams: ['account:0xabc'],
            conflicts: 1,
            integrityMismatches: 4,
            balanceDifferences: 0,
          },
        },
      }),
    );
    assert.match(html, /badge bad">incomplete/);
    assert.match(html, /finished <span[^>]*>3 min ago/);
    assert.match(html, /took 20 s/);
    assert.match(html, /1 of 2 stream\(s\) complete/);
    assert.match(html, /incomplete: account:0xabc/);
    assert.match(html, /4 record\(s\) not what their sender signed/);
    assert.match(html, /0 balance difference\(s\)/);
  });

  it('shows the queues when there are some, or why they could not be read', () => {
    assert.ok(!renderStatusPage(data()).includes('id="queues"'));
    const queue = { queue: 'ledger-sync', waiting: 4, delayed: 1, active: 2, failed: 3, paused: false };
    const html = renderStatusPage(data({ queues: { queues: [queue] } }));
    assert.match(
      html,
      /<td class="key">ledger-sync<\/td><td class="num">4<\/td><td class="num">1<\/td><td class="num">2<\/td><td class="num bad">3<\/td>/,
    );
    assert.match(
      renderStatusPage(data({ queues: { error: 'Redis did not answer in time' } })),
      /Redis did not answer in time/,
    );
  });

  it('says when no stream is synced yet', () => {
    const html = renderStatusPage(data({ streams: [] }));
    assert.match(html, /id="headline">no stream synced yet/);
  });
});

describe('status page: helpers', () => {
  it('escapes the five characters that matter in HTML', () => {
    assert.equal(escapeHtml(`<a href="x">'&'</a>`), '&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });

  it('says durations in words', () => {
    assert.deepEqual([5, 125, 3_900, 93_600].map(formatDuration), ['5 s', '2 min', '1 h 5 min', '1 d 2 h']);
  });
});
