import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

function run(args: string[]) {
  return spawn(process.execPath, ['--import', 'tsx', 'src/cli/bin.ts', 'simulate', ...args], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
}

async function finish(
  child: ReturnType<typeof run>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c) => (stdout += c));
  child.stderr.on('data', (c) => (stderr += c));
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, stdout, stderr };
}

describe('ledger-indexer simulate', () => {
  it('exits 2 with one line on a bad option', async () => {
    for (const args of [['--bogus'], ['--error-rate', '2'], ['--records', 'many'], ['--port', '70000']]) {
      const { code, stdout, stderr } = await finish(run(args));
      assert.equal(code, 2, args.join(' '));
      assert.equal(stdout, '');
      assert.equal(stderr.trimEnd().split('\n').length, 1, stderr);
    }
  });

  it('documents every option in --help', async () => {
    const { code, stdout } = await finish(run(['--help']));
    assert.equal(code, 0);
    for (const flag of [
      '--host',
      '--port',
      '--records',
      '--seed',
      '--arrivals',
      '--hang-rate',
      '--tampered-rate',
      '--request-budget',
    ]) {
      assert.ok(stdout.includes(flag), flag);
    }
  });

  it('starts on the given port, serves, and stops on SIGTERM', async () => {
    const child = run(['--port', '0', '--records', '1000', '--seed', '3', '--tampered-rate', '0.25']);
    const done = finish(child);
    let out = '';
    const url = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk) => {
        out += chunk;
        const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
        if (match) resolve(match[1]!);
      });
      child.once('close', () => reject(new Error(`exited before listening: ${out}`)));
    });
    const page = (await (await fetch(`${url}/txs`)).json()) as { totalPages: number; txs: unknown[] };
    assert.ok(page.totalPages >= 100);
    assert.equal(page.txs.length, 10);
    const faults = (await (await fetch(`${url}/_sim/faults`)).json()) as { tamperedRate: number };
    assert.equal(faults.tamperedRate, 0.25);
    child.kill('SIGTERM');
    const { code } = await done;
    assert.equal(code, 0);
  });
});
