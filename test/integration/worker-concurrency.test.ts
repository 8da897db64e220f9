import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import { startHttpServer, type TestHttpServer } from '../helpers/http-server.js';
import { forward } from '../helpers/proxy.js';
import { type Setup, setUp } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait-for.js';

/** The stream's watermark, once its walk has finished. */
async function walkedTo(setup: Setup): Promise<number | null> {
  const rows = await queryRows<{ watermark: string | null }>(
    setup.db.database.db,
    sql`select watermark::text as watermark from sync_streams where key = 'txs'`,
  );
  return rows[0]?.watermark == null ? null : Number(rows[0].watermark);
}

describe('LEDGER_CONCURRENCY in workers', () => {
  let setup: Setup | undefined;
  let proxy: TestHttpServer | undefined;
  after(async () => {
    await setup?.close();
    await proxy?.close();
  });

  it('bounds the pages of a walk and the re-reads of a job in flight at once', async () => {
    let target = '';
    const inFlight = { pages: 0, reads: 0 };
    const most = { pages: 0, reads: 0 };
    const server = await startHttpServer(async (request) => {
      const kind = request.path.startsWith('/txsByHash/') ? 'reads' : 'pages';
      inFlight[kind] += 1;
      most[kind] = Math.max(most[kind], inFlight[kind]);
      try {
        // Slow enough that a wider walk would have more in flight.
        await new Promise((resolve) => setTimeout(resolve, 50));
        return await forward(target, request);
      } finally {
        inFlight[kind] -= 1;
      }
    });
    proxy = server;
    // Twenty records at the head stay `confirmed`, to be re-read.
    const current = await setUp(
      'worker-concurrency',
      { records: 300, seed: 42, packageDelayMs: 3_600_000 },
      { env: { LEDGER_BASE_URL: server.baseUrl, LEDGER_CONCURRENCY: '2' } },
    );
    setup = current;
    current.sim.addRecords(20);
    target = current.url;
    await current.start(['--sequential-backfill']).ready;
    await current.queues.add('sync-stream', { stream: {} });
    await waitFor('the walk to finish', async () => (await walkedTo(current)) !== null, {
      timeoutMs: 30_000,
    });
    assert.equal(most.pages, 2, 'pages in flight at once');

    // Every pending record due now, then one re-read job.
    await queryRows(current.db.database.db, sql`update ledger_tx_rechecks set due_at = now()`);
    await current.queues.add('reconcile', { limit: 100 });
    const reads = () => server.requests.filter((r) => r.path.startsWith('/txsByHash/')).length;
    await waitFor('the re-reads', async () => reads() >= 20, { timeoutMs: 30_000 });
    assert.equal(most.reads, 2, 're-reads in flight at once');
  });
});
