import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { failureLine, signalExitCode } from '../../src/cli/run-outcome.js';
import { HttpError, LeaseLostError, NetworkError } from '../../src/errors.js';

describe('signalExitCode', () => {
  it('is 130 for SIGINT and 143 for SIGTERM, as shells report them', () => {
    const stopped = (name: string) => {
      const controller = new AbortController();
      controller.abort(new Error(name));
      return signalExitCode(controller.signal);
    };
    assert.equal(stopped('SIGINT'), 130);
    assert.equal(stopped('SIGTERM'), 143);
  });
});

describe('failureLine', () => {
  it('says the service failed and that the checkpoints are kept', () => {
    const line = failureLine(
      new HttpError({ status: 503, body: '{"error":"err_busy"}', url: 'http://x/txs' }),
      { resumes: true },
    );
    assert.match(
      line,
      /^the ledger service failed: HTTP 503 from http:\/\/x\/txs: err_busy; checkpoints kept/,
    );
    assert.match(
      failureLine(new NetworkError('http://x', 'connection refused')),
      /the ledger service failed/,
    );
  });

  it('names a lease held by another sync', () => {
    assert.match(
      failureLine(new LeaseLostError('txs', 'held by w1')),
      /another sync or a worker is syncing this stream/,
    );
  });
});
