import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatCompleteness, judgeStream } from '../../src/verify/completeness-report.js';
import type { ListCount } from '../../src/verify/list-count.js';

const count = (fields: Partial<ListCount> = {}): ListCount => ({
  upTo: 500,
  top: 500,
  listed: 480,
  stored: 480,
  above: 3,
  missing: { count: 0, rawIds: [] },
  withoutRawId: 0,
  extra: 0,
  unsettled: null,
  requests: 3,
  ...fields,
});

const judge = (listCount: ListCount, extra: Partial<Parameters<typeof judgeStream>[0]> = {}) =>
  judgeStream({
    stream: 'txs',
    watermark: 500,
    provenRanges: [],
    holes: [{ lo: 40, hi: 41 }],
    holeCount: 20,
    serviceHead: 503,
    totalPages: 49,
    count: listCount,
    ...extra,
  });

describe('judgeStream with the list count', () => {
  it('equal counts: complete, and the holes shown absent by the count', () => {
    const report = judge(count());
    assert.equal(report.complete, true);
    assert.equal(report.holesAbsentBy, 'count');
    assert.equal(report.behind, 3);
    assert.equal(report.serviceCount.exact, 483);
    const text = formatCompleteness([report]);
    assert.match(text, /at or below the watermark: service 480 = table 480 \+ 0 missing \(3 requests\)/);
    assert.match(text, /rawId holes \(rawIds not stored\): 20 \(40-41\); the service lists none of them/);
  });

  it('records missing beyond the walk limit: INCOMPLETE, counted and named', () => {
    const report = judge(count({ stored: 477, missing: { count: 3, rawIds: [7, 250] } }));
    assert.equal(report.complete, false);
    assert.deepEqual(report.missing, { count: 3, rawIds: [7, 250] });
    assert.deepEqual(report.problems, [
      'the service lists 480 records at or below the watermark, the table holds 477',
      '3 record(s) the service lists at or below the watermark are missing from the table (rawIds 7, 250; 1 more not named)',
    ]);
    assert.equal(report.holesAbsentBy, null, 'a missing record not named may lie in a hole');
    assert.match(formatCompleteness([report]), /not proven absent/);
  });

  it("the walk's missing records and the count's are merged", () => {
    const report = judge(count({ stored: 478, missing: { count: 2, rawIds: [7, 250] } }), {
      walked: { atOrBelow: 480, above: 3 },
      unstored: [250, 7],
    });
    assert.deepEqual(report.missing, { count: 2, rawIds: [7, 250] });
    assert.equal(report.holesAbsentBy, 'walk');
  });

  it('records missing above the settled mark alone: settling, not a problem (the next sync reads them)', () => {
    // 497 shown late, after the last sync read its span: the settled mark (490) stays below it.
    const late = count({ stored: 479, missing: { count: 1, rawIds: [497] } });
    const report = judge(late, { settled: 490 });
    assert.equal(report.complete, true);
    assert.deepEqual(report.problems, []);
    assert.deepEqual(report.missing, { count: 0, rawIds: [] });
    assert.deepEqual(report.settling, { count: 1, rawIds: [497], settled: 490 });
    const text = formatCompleteness([report]);
    assert.match(text, /^txs: settling$/m);
    assert.match(
      text,
      /settling: 1 record\(s\) the service lists above the settled mark 490 are not stored yet \(rawIds 497\)/,
    );
    assert.match(text, /the service lists none of them but the missing records below/);
    // At or below the mark, or without one kept, a missing record is a problem.
    const below = judge(count({ stored: 478, missing: { count: 2, rawIds: [480, 497] } }), { settled: 490 });
    assert.equal(below.complete, false);
    assert.deepEqual(below.missing, { count: 1, rawIds: [480] });
    assert.deepEqual(below.settling, { count: 1, rawIds: [497], settled: 490 });
    assert.match(below.problems.join('\n'), /the table holds 478/);
    assert.equal(judge(late, { settled: null }).complete, false);
    assert.equal(judge(late).settling, null);
    // One not named may lie at or below the mark: all of them stay missing.
    const unnamed = judge(count({ stored: 478, missing: { count: 2, rawIds: [497] } }), { settled: 490 });
    assert.equal(unnamed.complete, false);
    assert.equal(unnamed.settling, null);
  });

  it('records the table holds beyond the list, and a count that did not settle, are problems', () => {
    const extra = judge(count({ stored: 481, extra: 1 }));
    assert.equal(extra.complete, false);
    assert.match(
      extra.problems.join('\n'),
      /the table holds 1 record\(s\) of this list .* that the service does not list/,
    );
    const moving = judge(
      count({ listed: null, unsettled: 'the list could not be counted: records kept arriving' }),
    );
    assert.equal(moving.complete, false);
    assert.match(moving.problems.join('\n'), /records kept arriving; run verify again/);
    assert.equal(moving.holesAbsentBy, null);
  });
});
