import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { nonFinalLine, REPORT_WIDTH, renderDemoReport, statusPageLines } from '../../src/cli/demo-report.js';
import { formatCompactUnits } from '../../src/cli/format.js';
import type { ActivityRow } from '../../src/db/queries/action-report.js';

/** The simulator's enormous mint: 78 digits, an 18-decimals token. */
const HUGE = '827452793310469184224541650826419875409166934527040218317043265309811402175956';

const row = (overrides: Partial<ActivityRow>): ActivityRow => ({
  action: 'transfer',
  tokenTag: 'ethereum-eth-0x0000000000000000000000000000000000000000',
  symbol: 'ETH',
  decimals: 18,
  records: 10,
  movements: 10,
  volume: '1000000000000000000',
  ...overrides,
});

const nonFinal = { notPackaged: 40, queued: 54, due: 3 };

describe('formatCompactUnits', () => {
  it('writes a 78-digit amount in powers of ten, three significant digits', () => {
    assert.deepEqual(formatCompactUnits(HUGE, 18), { text: '8.27e+59', scientific: true });
    assert.equal(formatCompactUnits(`-${HUGE}`, 18).text, '-8.27e+59');
    assert.equal(formatCompactUnits(HUGE, 0).text, '8.27e+77');
  });

  it('rounds half up, carrying into the next power of ten', () => {
    assert.equal(formatCompactUnits('99950000000000000000', 0).text, '1.00e+20');
    assert.equal(formatCompactUnits('99949999999999999999', 0).text, '9.99e+19');
    assert.equal(formatCompactUnits('1234565', 6).text, '1.23');
    assert.equal(formatCompactUnits('1235000', 6).text, '1.24');
    assert.equal(formatCompactUnits('1994999', 6).text, '1.99');
    assert.equal(formatCompactUnits('1995000', 6).text, '2.00');
  });

  it('keeps up to 15 whole digits grouped, with exactly two decimals', () => {
    assert.deepEqual(formatCompactUnits('25858978738390263950000', 15), {
      text: '25,858,978.74',
      scientific: false,
    });
    assert.equal(formatCompactUnits('999999999999999994', 3).text, '999,999,999,999,999.99');
    assert.equal(formatCompactUnits('1000000000000000000', 3).text, '1.00e+15');
    assert.equal(formatCompactUnits('7', 0).text, '7.00');
    assert.equal(formatCompactUnits('-1500000', 6).text, '-1.50');
  });

  it('writes zero as 0, and an amount too small for two decimals in powers of ten', () => {
    assert.deepEqual(formatCompactUnits('0', 18), { text: '0', scientific: false });
    assert.equal(formatCompactUnits('000', 6).text, '0');
    assert.deepEqual(formatCompactUnits('1500000000', 18), { text: '1.50e-9', scientific: true });
    assert.equal(formatCompactUnits('5000000000000000', 18).text, '0.01');
  });

  it('refuses what is not an integer amount', () => {
    assert.throws(() => formatCompactUnits('1.5', 6), RangeError);
    assert.throws(() => formatCompactUnits('12', -1), RangeError);
  });
});

describe('renderDemoReport', () => {
  it('prints an extreme volume compactly and says the database keeps it exact', () => {
    const report = renderDemoReport(
      [row({ action: 'mint', volume: HUGE }), row({ action: 'bundle', records: 3, movements: 7 })],
      nonFinal,
    );
    assert.match(report, /^mint\s+ETH\s+10\s+10\s+8\.27e\+59\s+ETH$/m);
    assert.match(report, /^bundle\s+ETH\s+3\s+7\s+1\.00\s+ETH$/m);
    assert.match(report, /8\.27e\+59 is 8\.27 × 10\^59\); the database keeps them exact\.$/m);
    assert.doesNotMatch(report, /827,452/, 'no 78-digit number');
    assert.match(report, /^records by action and token \(13 in all\):$/m);
    assert.match(report, /^ACTION\s+TOKEN\s+RECORDS\s+MOVEMENTS\s+VOLUME$/m);
    assert.match(report, /^not final yet: 54 to re-read \(40 not packaged, 14 burns /m);
  });

  it('fits the width whatever the service names and amounts are', () => {
    const long = 'x'.repeat(300);
    const report = renderDemoReport(
      [
        row({ action: long, symbol: long, tokenTag: long, volume: `9${'9'.repeat(400)}`, records: 2 ** 40 }),
        row({ symbol: long, tokenTag: `${long}y`, decimals: null, movements: 2 ** 40 }),
        row({ action: 'mint', volume: `-${HUGE}` }),
        row({ action: 'transfer', volume: '999999999999999999999999999999999', decimals: 18 }),
      ],
      { notPackaged: 2 ** 40, queued: 2 ** 41, due: 0 },
    );
    const lines = [...report.split('\n'), ...statusPageLines({ port: 65_535, syncEverySeconds: 3 })];
    lines.push(...statusPageLines({ serving: 'http://127.0.0.1:65535', port: 65_535, syncEverySeconds: 3 }));
    for (const line of lines) assert.ok(line.length <= REPORT_WIDTH, `${line.length} columns: ${line}`);
    assert.match(report, /raw: a token \/info does not list/);
  });

  it('tells tokens sharing a symbol apart by their tags', () => {
    const report = renderDemoReport(
      [
        row({ symbol: 'USDC', tokenTag: 'ethereum-usdc-0xa0b8', decimals: 6 }),
        row({ symbol: 'USDC', tokenTag: 'bsc-usdc-0x8ac7', decimals: 6 }),
      ],
      nonFinal,
    );
    assert.match(report, /^transfer\s+USDC \(ethereum-usd…\)\s/m);
    assert.match(report, /^transfer\s+USDC \(bsc-usdc-0x8…\)\s/m);
  });

  it('reads nothing into an empty database', () => {
    const report = renderDemoReport([], { notPackaged: 0, queued: 0, due: 0 });
    assert.match(report, /\(0 in all\)/);
    assert.equal(nonFinalLine({ notPackaged: 0, queued: 0, due: 0 }).startsWith('not final yet: 0 '), true);
  });
});

describe('statusPageLines', () => {
  it('points at the status page, served or to serve', () => {
    assert.match(
      statusPageLines({ port: 9464, syncEverySeconds: 3 }).join('\n'),
      /demo --serve.*\n.*http:\/\/127\.0\.0\.1:9464\//,
    );
    const served = statusPageLines({ serving: 'http://127.0.0.1:4242', port: 0, syncEverySeconds: 3 });
    assert.match(served[0] ?? '', /^status page: http:\/\/127\.0\.0\.1:4242\/ /);
    assert.match(served[1] ?? '', /own API from the mirror: http:\/\/127\.0\.0\.1:4242\/txs\?count=10/);
    assert.match(served[2] ?? '', /the change feed, .*: http:\/\/127\.0\.0\.1:4242\/feed$/);
  });
});
