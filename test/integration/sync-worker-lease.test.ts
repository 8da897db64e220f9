import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { main } from '../../src/cli/main.js';
import { queryRows } from '../../src/db/rows.js';
import { startHttpServer, type TestHttpServer } from '../helpers/http-server.js';
import { provenCount, type Setup, setUp } from '../helpers/redis.js';
import { waitFor } from '../helpers/wait-for.js';

async function sync(env: Record<string, string>) {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => {
    out += c.toString();
  });
  stderr.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const code = await main(['sync'], { env, stdout, stderr, signal: new AbortController().signal });
  return { code, out, err };
}

describe('a one-shot sync beside workers', () => {
  let setup: Setup | undefined;
  let proxy: TestHttpServer | undefined;
  after(async () => {
    await proxy?.close();
    await setup?.close();
  });

  it('does not walk a stream whose parallel backfill workers are running, and says who holds it', async () => {
    setup = await setUp('sync-worker-lease', { records: 2000, seed: 23, faults: { latencyMs: 100 } });
    const current = setup;
    // The sync's own requests go through this proxy, so they can be counted apart from the workers'.
    proxy = await startHttpServer(async (request) => {
      const answer = await fetch(`${current.url}${request.url}`);
      return {
        status: answer.status,
        body: await answer.text(),
        headers: { 'content-type': 'application/json' },
      };
    });
    const env = {
      DATABASE_URL: current.db.url,
      LEDGER_BASE_URL: proxy.baseUrl,
      LEDGER_REQUESTS_PER_SECOND: '0',
      // The service speaks page numbers: told so, the sync asks nothing before its walk.
      LEDGER_PAGING: 'page',
      LOG_LEVEL: 'silent',
    };
    await current.start().ready;
    await current.queues.add('sync-stream', { stream: {} });
    await waitFor('the backfill ranges to be under way', async () => (await provenCount(current.db)) >= 1);

    const refused = await sync(env);
    assert.equal(refused.code, 1, refused.out);
    assert.equal(refused.err.trim().split('\n').length, 1, refused.err);
    assert.match(refused.err, /^ledger-indexer sync: lease on stream txs lost: held by backfill:\S+ until /);
    assert.match(refused.err, /another sync or a worker is syncing this stream/);
    const walked = proxy.requests.filter((r) => r.path === '/txs');
    assert.equal(walked.length, 0, 'the sync fetched none of the stream pages');
    const syncRuns = await queryRows<{ n: number }>(
      current.db.database.db,
      sql`SELECT count(*)::int AS n FROM sync_runs WHERE owner LIKE 'sync:%'`,
    );
    assert.equal(syncRuns[0]?.n, 0, 'the sync never held the lease');

    // Once the backfill is proven complete it lets go of the stream, and a sync tails it.
    await waitFor(
      'the backfill to finish',
      async () => {
        const rows = await queryRows<{ status: string }>(
          current.db.database.db,
          sql`SELECT status FROM backfill_runs`,
        );
        return rows[0]?.status === 'done';
      },
      { timeoutMs: 90_000 },
    );
    const after = await sync(env);
    assert.equal(after.code, 0, after.err);
    assert.match(after.out, /txs: tail/);
  });
});
