import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { provenCount, type Setup, setUp, syncToTruth } from '../helpers/redis.js';

describe('workers backfill in parallel', () => {
  let setup: Setup | undefined;
  after(async () => {
    await setup?.close();
  });

  it('three worker processes mirror a growing list exactly, with the proof of completeness recorded', async () => {
    setup = await setUp('worker-backfill', { records: 1200, arrivalsPerSecond: 20, seed: 11 });
    await Promise.all([setup.start(), setup.start(), setup.start()].map((w) => w.ready));
    await syncToTruth(setup, 40_000);
    assert.ok((await provenCount(setup.db)) > 0);
    await setup.close();
    setup = undefined;
  });
});
