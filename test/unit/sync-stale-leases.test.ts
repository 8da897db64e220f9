import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { hostname } from 'node:os';
import { describe, it } from 'node:test';
import { localSyncPid } from '../../src/cli/stale-leases.js';
import { processEnds, processRunning } from '../../src/db/process-liveness.js';
import { leaseOwnerName, parseLeaseOwner } from '../../src/domain/lease-owner.js';

describe('localSyncPid', () => {
  it('names the pid of a one-shot sync of this host', () => {
    assert.equal(localSyncPid(`sync:${hostname()}:4242:abc`), 4242);
  });

  it('never judges other hosts, other runners, other names or this very process', () => {
    assert.equal(localSyncPid('sync:elsewhere:4242:abc'), undefined);
    assert.equal(localSyncPid(`worker:${hostname()}:4242:abc`), undefined);
    assert.equal(localSyncPid('runner-a'), undefined);
    assert.equal(localSyncPid(leaseOwnerName('sync')), undefined);
  });

  it('reads the role, host and pid of an owner name', () => {
    assert.deepEqual(parseLeaseOwner('backfill:h:12:x'), { role: 'backfill', host: 'h', pid: 12 });
    assert.equal(parseLeaseOwner('backfill:abc'), undefined);
  });
});

describe('processRunning', () => {
  it('is true for this process and false for one that ended', async () => {
    assert.equal(processRunning(process.pid), true);
    const child = spawn(process.execPath, ['-e', '']);
    await once(child, 'close');
    assert.equal(processRunning(child.pid ?? 0), false);
  });

  it('takes a killed process its parent has not collected yet (a zombie) for ended', async () => {
    // `sh` starts `sleep` in the background, then becomes a `sleep` itself: a parent that never collects it.
    const parent = spawn('sh', ['-c', 'sleep 30 & echo $!; exec sleep 30'], {
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    try {
      const [line] = (await once(parent.stdout, 'data')) as [Buffer];
      const pid = Number(line.toString().trim());
      assert.equal(processRunning(pid), true);
      process.kill(pid, 'SIGKILL');
      // Judged ended while its parent has not collected it: had a zombie counted as running,
      // this would wait the whole five seconds and fail. (Where something else collects it
      // first, as a machine's first process may, the pid is simply gone: ended all the same.)
      assert.equal(await processEnds(pid, 5_000), true);
    } finally {
      parent.kill('SIGKILL');
    }
  });
});
