import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { medianRun, type ThroughputRun, throughput } from '../../bench/figures.js';

describe("the bench's repeated runs", () => {
  const run = (wallMs: number): ThroughputRun =>
    throughput({
      label: 'x',
      rows: 1000,
      expectedRows: 1000,
      wallMs,
      pagesRequested: 100,
      peakRssBytes: null,
    });

  it('report the run of median wall time, every run listed in its note', async () => {
    const walls = [9600, 7300, 8100];
    const median = await medianRun(3, async () => run(walls.shift()!));
    assert.equal(median.wallMs, 8100);
    assert.equal(median.rowsPerSecond, 123.5);
    assert.equal(median.note, 'median of 3 runs (9.6, 7.3, 8.1 s)');
  });

  it('report a single run as it is', async () => {
    assert.deepEqual(await medianRun(1, async () => run(5000)), run(5000));
  });
});
