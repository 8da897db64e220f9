import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatDuration, formatUnits, shortenMiddle } from '../../src/cli/format.js';
import { createProgress } from '../../src/cli/progress.js';

describe('formatUnits', () => {
  it('places the decimal point exactly, with no float rounding', () => {
    assert.equal(formatUnits('1234500', 6), '1.2345');
    assert.equal(formatUnits('1', 18), '0.000000000000000001');
    assert.equal(formatUnits('0', 6), '0');
    assert.equal(formatUnits('1000000', 6), '1');
    assert.equal(formatUnits('123456789', 0), '123,456,789');
    const max = (2n ** 256n - 1n).toString();
    assert.equal(
      formatUnits(max, 18),
      '115,792,089,237,316,195,423,570,985,008,687,907,853,269,984,665,640,564,039,457.584007913129639935',
    );
  });

  it('refuses what is not a decimal amount', () => {
    assert.throws(() => formatUnits('1e5', 2), RangeError);
  });
});

describe('formatDuration', () => {
  it('reads like a clock', () => {
    assert.equal(formatDuration(42), '42s');
    assert.equal(formatDuration(185), '3m05s');
    assert.equal(formatDuration(3720), '1h02m');
  });
});

describe('createProgress', () => {
  const event = (page: number) => ({
    key: 'txs',
    mode: 'backfill' as const,
    page,
    pages: 1,
    totalPages: 10,
    records: 10,
    counts: { inserted: 10, updated: 0, unchanged: 0, rejected: 0, conflicts: 0 },
  });

  it('redraws one bar with pages, rate and ETA on a terminal', () => {
    let out = '';
    let clock = 0;
    const progress = createProgress({
      out: { write: (s: string) => (out += s) } as never,
      tty: true,
      now: () => clock,
    });
    clock = 1000;
    progress.page(event(1));
    clock = 2000;
    progress.page(event(2));
    assert.match(out, /\r\x1b\[K\[#####\.+\] txs backfill page 2\/10 {2}20 records {2}10 rec\/s {2}ETA 8s/);
    progress.done();
    assert.ok(out.endsWith('\r\x1b[K'));
  });

  it("counts a stream's requests by key across its backfill in lanes and the tail after it, under the backfill", () => {
    const lines: string[] = [];
    const progress = createProgress({ out: { write: (s: string) => lines.push(s) } as never, tty: false });
    const byKey = (mode: 'backfill' | 'tail', page: number, pages: number) => ({
      ...event(page),
      mode,
      pages,
      totalPages: 0,
    });
    progress.page(byKey('backfill', 16, 16));
    progress.page(byKey('backfill', 32, 16));
    progress.page(byKey('tail', 1, 1));
    progress.done();
    assert.match(lines.at(-1) ?? '', /^txs backfill by key, request 33 {2}30 records/);
  });

  it('prints plain lines at most every interval when not a terminal', () => {
    const lines: string[] = [];
    let clock = 0;
    const progress = createProgress({
      out: { write: (s: string) => lines.push(s) } as never,
      tty: false,
      now: () => clock,
      plainEveryMs: 1000,
    });
    for (let page = 1; page <= 5; page++) {
      clock = page * 400;
      progress.page(event(page));
    }
    assert.equal(lines.length, 2);
    assert.ok(lines.every((line) => !line.includes('\r') && line.endsWith('\n')));
  });
});

describe('shortenMiddle', () => {
  it('keeps short text, escapes line breaks and control characters, cuts long text in the middle', () => {
    assert.equal(shortenMiddle('txs', 10), 'txs');
    assert.equal(shortenMiddle('a\nb\u0007', 20), 'a\\nb\\u0007');
    const cut = shortenMiddle(`head${'x'.repeat(10_000)}tail`, 20);
    assert.equal([...cut].length, 20);
    assert.match(cut, /^headx+…x*tail$/);
  });
});
