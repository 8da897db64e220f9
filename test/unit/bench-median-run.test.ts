import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { medianOfRuns, medianRun, type ThroughputRun, throughput } from '../../bench/figures.js';

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

  it('report the run of median wall time with the median CPU and peak memory, every run in the note', async () => {
    const runs = [
      { ...run(9600), cpuMs: 5000, peakRssBytes: 190 },
      { ...run(7300), cpuMs: 4000, peakRssBytes: 210 },
      { ...run(8100), cpuMs: 6000, peakRssBytes: 200 },
    ];
    const median = await medianRun(3, async () => runs.shift()!);
    assert.equal(median.wallMs, 8100);
    assert.equal(median.rowsPerSecond, 123.5);
    assert.equal(median.cpuMs, 5000);
    assert.equal(median.peakRssBytes, 200);
    assert.equal(median.note, 'median of 3 runs (9.6, 7.3, 8.1 s)');
  });

  it('report a single run as it is', async () => {
    assert.deepEqual(await medianRun(1, async () => run(5000)), run(5000));
  });

  it('of interleaved rounds: the median of each side, and not run when one of its runs failed', () => {
    const sync = [run(12_000), run(9_000), run(10_000)];
    const script = [run(15_300), { notRun: 'the script stored 0 rows' }, run(11_400)];
    assert.equal(medianOfRuns(sync).wallMs, 10_000);
    assert.deepEqual(medianOfRuns(script), { notRun: 'the script stored 0 rows' });
  });
});
