import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import type { CommandIo } from '../../src/cli/command.js';
import { defineCommand } from '../../src/cli/define-command.js';
import { ConfigError, NetworkError } from '../../src/errors.js';

function io(signal = new AbortController().signal): CommandIo & { err: () => string } {
  const stderr = new PassThrough();
  let err = '';
  stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  return { env: { LOG_LEVEL: 'silent' }, stdout: new PassThrough(), stderr, signal, err: () => err };
}

/** A command whose body throws `error` (after `before`), recording the closes it registered. */
function throwing(error: unknown, closed: string[], before: () => void = () => undefined) {
  return defineCommand({
    name: 'probe',
    usage: 'Usage: ledger-indexer probe',
    flags: { n: { type: 'string' } },
    async run({ onClose }) {
      onClose(() => closed.push('first'));
      onClose(() => closed.push('second'));
      before();
      throw error;
    },
  });
}

describe('defineCommand', () => {
  it('passes a ConfigError on to main (exit 2 there), after closing what was opened', async () => {
    const closed: string[] = [];
    const error = new ConfigError('--n', 'is wrong');
    await assert.rejects(throwing(error, closed).run([], io()), (e) => e === error);
    assert.deepEqual(closed, ['second', 'first']);
  });

  it('ends a run stopped by SIGTERM with 143 and the stopped line, SIGINT with 130', async () => {
    for (const [name, code] of [
      ['SIGTERM', 143],
      ['SIGINT', 130],
    ] as const) {
      const controller = new AbortController();
      const edges = io(controller.signal);
      const closed: string[] = [];
      const command = throwing(new Error('aborted'), closed, () => controller.abort(new Error(name)));
      assert.equal(await command.run([], edges), code);
      assert.equal(edges.err(), `ledger-indexer probe: stopped by ${name}\n`);
      assert.deepEqual(closed, ['second', 'first']);
    }
  });

  it('ends any other failure with 1 and its one failure line', async () => {
    const edges = io();
    const error = new NetworkError('http://127.0.0.1:1/info', 'connection refused\nstack');
    assert.equal(await throwing(error, []).run([], edges), 1);
    assert.equal(edges.err(), 'ledger-indexer probe: the ledger service failed: connection refused\n');
  });

  it('turns a bad flag into a UsageError before the body runs', async () => {
    const closed: string[] = [];
    await assert.rejects(throwing(new Error('x'), closed).run(['--m'], io()), { name: 'UsageError' });
    assert.deepEqual(closed, []);
  });
});
