import assert from 'node:assert/strict';
import { getEventListeners, once } from 'node:events';
import { after, before, describe, it } from 'node:test';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { deadline } from '../../src/abort.js';

/** A full garbage collection, as `--expose-gc` would give. */
function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  (runInNewContext('gc') as () => void)();
}

describe('a deadline', () => {
  // Its timer does not keep the process alive (the socket a request waits on does): this does.
  let alive: NodeJS.Timeout;
  before(() => {
    alive = setInterval(() => {}, 1000);
  });
  after(() => clearInterval(alive));

  it('aborts with a TimeoutError when its time is up, though nothing but the wait holds it', async () => {
    // The wait a request makes on a composite of a timeout (nodejs/node#57736): a collection in
    // between must not lose the timer.
    const aborted = (async () => {
      const { signal } = deadline(50);
      const [event] = await once(signal, 'abort');
      return (event as Event).target as AbortSignal;
    })();
    collectGarbage();
    await new Promise((resolve) => setImmediate(resolve));
    collectGarbage();
    const signal = await aborted;
    assert.equal((signal.reason as Error).name, 'TimeoutError');
  });

  it("follows its parent's abort with the parent's reason, and lets go of the parent once cleared", async () => {
    const parent = new AbortController();
    const bounded = deadline(60_000, parent.signal);
    parent.abort(new Error('closing'));
    assert.equal(bounded.signal.aborted, true);
    assert.equal((bounded.signal.reason as Error).message, 'closing');

    const longLived = new AbortController();
    for (let i = 0; i < 100; i++) deadline(60_000, longLived.signal).clear();
    assert.equal(getEventListeners(longLived.signal, 'abort').length, 0, 'no listener left per request');
  });

  it('never aborts once cleared', async () => {
    const bounded = deadline(20);
    bounded.clear();
    await new Promise((resolve) => setTimeout(resolve, 60));
    assert.equal(bounded.signal.aborted, false);
  });
});
