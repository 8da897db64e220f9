import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { provenCount, type Setup, setUp, syncToTruth } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait-for.js';

describe('a worker killed outright', () => {
  let setup: Setup | undefined;
  after(async () => {
    await setup?.close();
  });

  it('a worker killed outright mid-run loses nothing: its jobs run again on the others', async () => {
    setup = await setUp('worker-kill', {
      records: 1200,
      arrivalsPerSecond: 20,
      seed: 12,
      faults: { latencyMs: 20 },
    });
    const current = setup;
    const doomed = current.start();
    await Promise.all([doomed.ready, current.start().ready]);
    await current.queues.add('sync-stream', { stream: {} });
    await waitFor('some ranges to be stored', async () => (await provenCount(current.db)) >= 10, {
      timeoutMs: 20_000,
    });
    doomed.child.kill('SIGKILL');
    assert.equal((await doomed.exited).signal, 'SIGKILL');
    await current.start().ready;
    await syncToTruth(current, 40_000);
    await current.close();
    setup = undefined;
  });
});
