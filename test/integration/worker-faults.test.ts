import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { type Setup, setUp, syncToTruth } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait-for.js';

describe('workers against an unreliable service', () => {
  let setup: Setup | undefined;
  after(async () => {
    await setup?.close();
  });

  it('requests failing, hanging or slow still end with the table equal to the service', async () => {
    setup = await setUp('worker-faults', {
      records: 800,
      arrivalsPerSecond: 10,
      seed: 21,
      faults: { errorRate: 0.1, hangRate: 0.01, latencyMs: 5, latencyJitterMs: 40 },
    });
    await Promise.all([setup.start().ready, setup.start().ready]);
    await syncToTruth(setup, 45_000);
    await setup.close();
    setup = undefined;
  });

  it('a storm of 429s pauses the queues for Retry-After and the run still completes', async () => {
    setup = await setUp(
      'worker-429',
      { records: 500, arrivalsPerSecond: 5, seed: 22, faults: { rateLimitRate: 0.5, retryAfterSeconds: 1 } },
      // No client-side retries: every 429 reaches the job, which must pause the queue, not fail.
      { env: { LEDGER_RETRIES: '0' } },
    );
    const current = setup;
    const workers = [current.start(), current.start()];
    await Promise.all(workers.map((w) => w.ready));
    const logs = () => workers.map((w) => w.log()).join('\n');
    const throttles = () => logs().split('service throttled, pausing the queue').length - 1;
    // The storm lasts until the workers have paused several times, then the service calms down.
    const storm = waitFor('several pauses', async () => throttles() >= 4, { timeoutMs: 30_000 }).then(() =>
      current.sim.setFaults({ rateLimitRate: 0 }),
    );
    await syncToTruth(current, 45_000);
    await storm;
    assert.ok(throttles() >= 4);
    assert.doesNotMatch(logs(), /"level":50/, 'no job failed for good');
    await setup.close();
    setup = undefined;
  });
});
