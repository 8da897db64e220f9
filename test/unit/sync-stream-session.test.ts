import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ReleaseOutcome, SyncStore } from '../../src/sync/ports/sync-store.js';
import { openStreamSession } from '../../src/sync/stream-session.js';
import type { SyncLogger } from '../../src/sync/sync-logger.js';

/** A store of leases alone: each take hands out the next fence; releases are kept. */
function leaseStore(options: { failRelease?: boolean } = {}) {
  let fence = 0;
  const released: ReleaseOutcome[] = [];
  let takes = 0;
  const store: Pick<SyncStore, 'acquireStream' | 'releaseStream'> = {
    async acquireStream(spec) {
      takes++;
      await new Promise((resolve) => setImmediate(resolve));
      fence++;
      return {
        lease: { key: 'txs', fence, owner: 'o' },
        state: { key: 'txs', spec, watermark: null, walk: null, settle: { settled: null, pending: null } },
      };
    },
    async releaseStream(_lease, outcome) {
      if (options.failRelease) throw new Error('connection reset');
      released.push(outcome);
    },
  };
  return { store, released, takes: () => takes };
}

const warnings: string[] = [];
const logger: SyncLogger = {
  debug: () => {},
  info: () => {},
  warn: (_object, message) => warnings.push(message ?? ''),
  error: () => {},
};

describe('a stream session', () => {
  it('renews its lease once a third has passed, once for callers at the same time, after the commits in flight', async () => {
    const leases = leaseStore();
    const clock = { ms: 0 };
    const session = await openStreamSession({
      store: leases.store,
      spec: {},
      owner: 'o',
      leaseMs: 300,
      logger,
      now: () => clock.ms,
    });
    assert.equal(session.lease().fence, 1);
    await session.renew();
    assert.equal(leases.takes(), 1, 'not due yet');
    clock.ms = 101;
    const order: string[] = [];
    const settled = async () => {
      order.push('settled');
    };
    await Promise.all([session.renew(settled), session.renew(settled), session.renew(settled)]);
    assert.equal(leases.takes(), 2, 'one renewal for three callers');
    assert.deepEqual(order, ['settled']);
    assert.equal(session.lease().fence, 2);
    assert.equal(session.due(), false);
  });

  it('ends ok, stopped by its signal, or failed with the error, and never throws a failed release over the error', async () => {
    const ok = leaseStore();
    await (await openStreamSession({ store: ok.store, spec: {}, owner: 'o', leaseMs: 1000, logger })).end({
      finished: true,
    });
    const stop = new AbortController();
    const stopped = leaseStore();
    const stoppedSession = await openStreamSession({
      store: stopped.store,
      spec: {},
      owner: 'o',
      leaseMs: 1000,
      logger,
      signal: stop.signal,
    });
    stop.abort(new Error('SIGTERM'));
    await stoppedSession.end({ finished: false });
    const failed = leaseStore();
    await (await openStreamSession({ store: failed.store, spec: {}, owner: 'o', leaseMs: 1000, logger })).end(
      {
        error: new Error('HTTP 500'),
      },
    );
    assert.deepEqual(ok.released, [{ ok: true }]);
    assert.deepEqual(stopped.released, [{ ok: false, stopped: true, error: 'stopped by SIGTERM' }]);
    assert.deepEqual(failed.released, [{ ok: false, error: 'HTTP 500' }]);

    const broken = leaseStore({ failRelease: true });
    const session = await openStreamSession({
      store: broken.store,
      spec: {},
      owner: 'o',
      leaseMs: 1000,
      logger,
    });
    await session.end({ error: new Error('HTTP 500') });
    assert.deepEqual(warnings, ['could not release the stream lease']);
    const finished = await openStreamSession({
      store: broken.store,
      spec: {},
      owner: 'o',
      leaseMs: 1000,
      logger,
    });
    await assert.rejects(finished.end({ finished: true }), /connection reset/);
  });

  it('releases once however often it is ended: a failure thrown past a check that ended it', async () => {
    const leases = leaseStore();
    const session = await openStreamSession({
      store: leases.store,
      spec: {},
      owner: 'o',
      leaseMs: 1000,
      logger,
    });
    await session.end({ error: new Error('2 gap(s) still unproven') });
    await session.end({ error: new Error('stream txs by key: still unproven') });
    await session.end({ finished: true });
    assert.deepEqual(leases.released, [{ ok: false, error: '2 gap(s) still unproven' }]);
  });
});
