import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { COMMAND_ENTRY } from '../helpers/command-entry.js';
import { waitFor } from '../helpers/wait-for.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

function run(args: string[]) {
  return spawn(process.execPath, [...COMMAND_ENTRY, 'simulate', ...args], {
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

/** The simulator's address, once it says it listens. */
function listening(child: ReturnType<typeof run>): Promise<string> {
  let out = '';
  return new Promise<string>((resolve, reject) => {
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (match) resolve(match[1]!);
    });
    child.once('close', () => reject(new Error(`exited before listening: ${out}`)));
  });
}

describe('ledger-indexer simulate', () => {
  it('exits 2 with one line on a bad option', async () => {
    for (const args of [
      ['--bogus'],
      ['--error-rate', '2'],
      ['--records', 'many'],
      ['--port', '70000'],
      ['--late-rate', '2'],
      ['--late-ms', 'soon'],
      ['--paging', 'cursor'],
      ['--max-count', 'ten'],
    ]) {
      const { code, stdout, stderr } = await finish(run(args));
      assert.equal(code, 2, args.join(' '));
      assert.equal(stdout, '');
      assert.equal(stderr.trimEnd().split('\n').length, 1, stderr);
      assert.ok(stderr.includes(args[0]!), stderr);
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
      '--late-rate',
      '--late-ms',
      '--paging',
      '--max-count',
      '--refuse-count-above',
    ]) {
      assert.ok(stdout.includes(flag), flag);
    }
  });

  it('starts on the given port, serves, and stops on SIGTERM', async () => {
    const child = run(['--port', '0', '--records', '1000', '--seed', '3', '--tampered-rate', '0.25']);
    const done = finish(child);
    const url = await listening(child);
    const page = (await (await fetch(`${url}/txs`)).json()) as { totalPages: number; txs: unknown[] };
    assert.ok(page.totalPages >= 100);
    assert.equal(page.txs.length, 10);
    const faults = (await (await fetch(`${url}/_sim/faults`)).json()) as { tamperedRate: number };
    assert.equal(faults.tamperedRate, 0.25);
    child.kill('SIGTERM');
    const { code } = await done;
    assert.equal(code, 0);
  });

  it('serves the chosen paging dialect with its count limits', async () => {
    const args = [
      '--port',
      '0',
      '--records',
      '200',
      '--arrivals',
      '0',
      '--paging',
      'key',
      '--max-count',
      '25',
    ];
    const child = run([...args, '--refuse-count-above', '100']);
    const done = finish(child);
    const url = await listening(child);
    const list = async (query: string) => {
      const res = await fetch(`${url}/txs?${query}`);
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    };
    const paged = await list('page=3');
    assert.deepEqual(Object.keys(paged.body), ['txs', 'hasNextPage'], 'page is ignored by a key-only server');
    assert.equal((paged.body.txs as unknown[]).length, 10);
    assert.equal(((await list('order=asc&count=100')).body.txs as unknown[]).length, 25);
    assert.deepEqual(await list('count=101'), { status: 400, body: { error: 'err_invalid_count' } });
    const stats = (await (await fetch(`${url}/_sim/stats`)).json()) as Record<string, unknown>;
    assert.equal(stats.keyRequests, 3);
    assert.equal(stats.pageRequests, 0);
    child.kill('SIGTERM');
    assert.equal((await done).code, 0);
  });

  it('makes arriving records visible late with --late-rate and --late-ms', async () => {
    const args = [
      '--port',
      '0',
      '--records',
      '100',
      '--arrivals',
      '0',
      '--late-rate',
      '1',
      '--late-ms',
      '600',
    ];
    const child = run(args);
    const done = finish(child);
    const url = await listening(child);
    const head = ((await (await fetch(`${url}/txs`)).json()) as { txs: Array<{ rawId: number }> }).txs[0]!
      .rawId;
    const added = (await (await fetch(`${url}/_sim/records?count=3`, { method: 'POST' })).json()) as {
      headRawId: number;
      records: number;
    };
    assert.ok(added.headRawId > head);
    assert.equal(added.records, 100, 'the three added are not visible yet');
    const first = async () =>
      ((await (await fetch(`${url}/txs`)).json()) as { txs: Array<{ rawId: number }> }).txs[0]!.rawId;
    assert.equal(await first(), head);
    await waitFor('the late records', async () => (await first()) === added.headRawId, { timeoutMs: 10_000 });
    child.kill('SIGTERM');
    assert.equal((await done).code, 0);
  });
});
