import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createMetrics } from '../../src/metrics/index.js';

/** The value of one series in Prometheus text, 0 when absent. */
function sample(text: string, series: string): number {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.split(' ').at(-1));
}

describe('list requests by dialect in /metrics', () => {
  it('counts key and page list requests apart, and nothing for other endpoints', async () => {
    const metrics = createMetrics({ process: 'test:1' });
    metrics.client.attempt('txsByKey', 'ok', 0.01);
    metrics.client.attempt('txsByKey', 'ok', 0.01);
    metrics.client.attempt('detectPaging', 'ok', 0.01);
    metrics.client.attempt('txs', 'ok', 0.01);
    metrics.client.attempt('info', 'ok', 0.01);
    const text = await metrics.text();
    assert.equal(sample(text, 'ledger_indexer_requests_total{process="test:1",dialect="key"}'), 3);
    assert.equal(sample(text, 'ledger_indexer_requests_total{process="test:1",dialect="page"}'), 1);
  });
});
