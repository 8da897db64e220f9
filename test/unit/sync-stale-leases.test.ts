import assert from 'node:assert/strict';
import { hostname } from 'node:os';
import { describe, it } from 'node:test';
import { isDeadLocalOwner, syncOwner } from '../../src/cli/stale-leases.js';

describe('isDeadLocalOwner', () => {
  it('recognises a one-shot sync of this host whose process is gone', () => {
    assert.equal(
      isDeadLocalOwner(`sync:${hostname()}:4242:abc`, () => false),
      true,
    );
    assert.equal(
      isDeadLocalOwner(`sync:${hostname()}:4242:abc`, () => true),
      false,
    );
  });

  it('never judges other hosts, other runners or this very process', () => {
    assert.equal(
      isDeadLocalOwner('sync:elsewhere:4242:abc', () => false),
      false,
    );
    assert.equal(
      isDeadLocalOwner(`worker:${hostname()}:4242:abc`, () => false),
      false,
    );
    assert.equal(
      isDeadLocalOwner(syncOwner(), () => false),
      false,
    );
  });
});
