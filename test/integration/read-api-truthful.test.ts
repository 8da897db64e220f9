/**
 * The read API says what the mirror does not hold: 503 before a list is backfilled, never an
 * empty list that looks complete; an account synced alone answers its own lists only; the
 * freshness headers follow the service; `since`/`until` cut the lists by ledger time; the token.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { COVERAGE_REUSE_MS } from '../../src/app/read-api/coverage-reads.js';
import { READ_STATEMENT_TIMEOUT_MS } from '../../src/app/read-api/read-transaction.js';
import type { HttpSurface } from '../../src/http/server.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { freePort } from '../helpers/free-port.js';
import { fetchText, openTestSurface, parseSamples, sampleSum } from '../helpers/http-surface.js';
import { runMain } from '../helpers/run-main.js';

/** Waits until the read API reads the streams' coverage again rather than reuse its last read. */
function coverageReadAgain(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, COVERAGE_REUSE_MS + 10));
}

const TOKEN = 'read-api-test-token-0123456789';

let simulator: Simulator;
let serviceUrl: string;
let testDb: TestDatabase;
let env: Record<string, string>;
let surface: HttpSurface;
let guarded: HttpSurface;
const stop = new AbortController();

interface Answer {
  status: number;
  json: Record<string, unknown>;
  headers: Headers;
}

async function get(base: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const response = await fetch(`${base}${path}`, { headers });
  return {
    status: response.status,
    json: (await response.json()) as Record<string, unknown>,
    headers: response.headers,
  };
}

type Tx = { rawId: number; timestamp: number; from: string; to: string; ledgerHash: string };

/** Every record of the service, oldest first (its own key walk). */
async function serviceRecords(): Promise<Tx[]> {
  const all: Tx[] = [];
  for (let cursor = 0; ; ) {
    const page = (await get(serviceUrl, `/txs?order=asc&count=100&cursor=${cursor}`)).json as {
      txs: Tx[];
      hasNextPage: boolean;
    };
    all.push(...page.txs);
    if (!page.hasNextPage || page.txs.length === 0) return all;
    cursor = page.txs.at(-1)!.rawId;
  }
}

/** The rawIds of a mirror list read by key to its end. */
async function mirrorRawIds(query: string): Promise<number[]> {
  const ids: number[] = [];
  for (let cursor = 0; ; ) {
    const page = await get(surface.url, `/txs?${query}&count=100${cursor ? `&cursor=${cursor}` : ''}`);
    assert.equal(page.status, 200, JSON.stringify(page.json));
    const txs = page.json['txs'] as Tx[];
    ids.push(...txs.map((t) => t.rawId));
    if (page.json['hasNextPage'] !== true) return ids;
    cursor = txs.at(-1)!.rawId;
  }
}

before(async () => {
  simulator = createSimulator({ records: 600, seed: 77, arrivalsPerSecond: 0, maxCount: 100 });
  serviceUrl = (await simulator.listen()).url;
  testDb = await createTestDatabase();
  env = {
    LEDGER_BASE_URL: serviceUrl,
    DATABASE_URL: testDb.url,
    LEDGER_REQUESTS_PER_SECOND: '0',
    LOG_LEVEL: 'silent',
  };
  const open = (config: Record<string, string>) =>
    openTestSurface({ testDb, signal: stop.signal, env: config });
  surface = await open({});
  guarded = await open({ LEDGER_HTTP_TOKEN: TOKEN });
});

after(async () => {
  stop.abort();
  await surface?.close();
  await guarded?.close();
  await simulator?.close();
  await testDb?.drop();
});

describe('read API: truthful refusals and freshness', () => {
  let records: Tx[];
  let account: string;
  let other: string;

  it('refuses every list and look-up with 503 before anything is synced', async () => {
    records = await serviceRecords();
    account = records[records.length - 1]!.from;
    other = records.find((r) => r.from !== account && r.to !== account)!.from;
    for (const path of [
      '/txs?count=5',
      '/txs',
      `/txs/${account}`,
      `/txsByAccount/${account}?count=5`,
      `/tx/${records[0]!.ledgerHash}`,
    ]) {
      const answer = await get(surface.url, path);
      assert.deepEqual([answer.status, answer.json], [503, { error: 'err_mirror_not_backfilled' }], path);
    }
    for (const path of ['/info', '/fees', `/balances/${account}`]) {
      const answer = await get(surface.url, path);
      assert.deepEqual([answer.status, answer.json], [503, { error: 'err_reference_not_mirrored' }], path);
    }
  });

  it("answers an account's own lists once that account alone is synced, and refuses the rest", async () => {
    const synced = await runMain(['sync', '--account', account], env);
    assert.equal(synced.code, 0, synced.err);
    const own = records
      .filter((r) => r.from === account || r.to === account)
      .map((r) => r.rawId)
      .reverse();
    for (const path of [`/txs/${account}?count=100`, `/txs?address=${account}&count=100`]) {
      const answer = await get(surface.url, path);
      assert.equal(answer.status, 200, path);
      assert.deepEqual(
        (answer.json['txs'] as Tx[]).map((t) => t.rawId),
        own.slice(0, 100),
        path,
      );
    }
    const paged = await get(surface.url, `/txsByAccount/${account}?page=1`);
    assert.equal(paged.json['totalPages'], Math.ceil(own.length / 10));
    // Its records are found by hash; a record the mirror lacks is not called missing.
    const mine = records.find((r) => r.from === account)!;
    assert.equal((await get(surface.url, `/tx/${mine.ledgerHash}`)).status, 200);
    for (const path of [
      '/txs?count=5',
      `/txs/${other}?count=5`,
      `/tx/0x${'ab'.repeat(32)}`,
      `/balances/${account}`,
    ]) {
      const answer = await get(surface.url, path);
      assert.deepEqual([answer.status, answer.json], [503, { error: 'err_mirror_not_backfilled' }], path);
    }
  });

  it('answers every list once the global list is synced, saying how fresh', async () => {
    const synced = await runMain(['sync'], env);
    assert.equal(synced.code, 0, synced.err);
    const answer = await get(surface.url, `/txs/${other}?count=5`);
    assert.equal(answer.status, 200);
    assert.equal(answer.headers.get('x-mirror-watermark'), String(simulator.headRawId()));
    assert.equal(answer.headers.get('x-mirror-lag-raw-ids'), '0');
    const lagMs = Number(answer.headers.get('x-mirror-lag-ms'));
    assert.ok(lagMs >= 0 && lagMs < 60_000, `lag ${lagMs} ms`);
    assert.equal((await get(surface.url, `/tx/0x${'ab'.repeat(32)}`)).status, 404);
  });

  it('answers up to the watermark only: records stored above it may have gaps a tail fills later', async () => {
    const db = testDb.database.db;
    const head = simulator.headRawId();
    const held = records.filter((r) => r.rawId <= head - 40).map((r) => r.rawId);
    await db.execute(sql`UPDATE sync_streams SET watermark = ${head - 40} WHERE key = 'txs'`);
    // A list by key reads a coverage at most this old (`coverage-reads.ts`).
    await coverageReadAgain();
    try {
      const answer = await get(surface.url, '/txs?count=3');
      assert.deepEqual(
        (answer.json['txs'] as Tx[]).map((t) => t.rawId),
        held.slice(-3).reverse(),
      );
      assert.equal(answer.headers.get('x-mirror-watermark'), String(head - 40));
      const asc = await get(surface.url, `/txs?order=asc&cursor=${head - 42}`);
      assert.deepEqual(
        (asc.json['txs'] as Tx[]).map((t) => t.rawId),
        held.filter((id) => id > head - 42),
      );
      assert.equal(asc.json['hasNextPage'], false);
      const page = await get(surface.url, '/txs');
      assert.equal(page.json['totalPages'], Math.ceil(held.length / 10));
    } finally {
      await db.execute(sql`UPDATE sync_streams SET watermark = ${head} WHERE key = 'txs'`);
      await coverageReadAgain();
    }
  });

  it('shows the service moving ahead once its head is seen, and catching up after a sync', async () => {
    const watermark = simulator.headRawId();
    await fetch(`${serviceUrl}/_sim/records?count=25`, { method: 'POST' });
    const status = await runMain(['status', '--json'], env);
    assert.equal(status.code, 0, status.err);
    const behind = await get(surface.url, '/txs?count=1');
    assert.equal(behind.headers.get('x-mirror-watermark'), String(watermark));
    assert.equal(behind.headers.get('x-mirror-lag-raw-ids'), String(simulator.headRawId() - watermark));
    assert.equal((await runMain(['sync'], env)).code, 0);
    const caughtUp = await get(surface.url, '/txs?count=1');
    assert.equal(caughtUp.headers.get('x-mirror-lag-raw-ids'), '0');
    records = await serviceRecords();
  });

  it("refuses a key request's tag list while no /info tokens are stored, rather than match nothing", async () => {
    const db = testDb.database.db;
    await db.execute(sql`CREATE TABLE held_tokens AS SELECT * FROM ledger_tokens`);
    await db.execute(sql`DELETE FROM ledger_tokens`);
    try {
      const refused = await get(surface.url, '/txs?count=5&tokenTag=anything');
      assert.deepEqual([refused.status, refused.json], [503, { error: 'err_reference_not_mirrored' }]);
    } finally {
      await db.execute(sql`INSERT INTO ledger_tokens SELECT * FROM held_tokens`);
      await db.execute(sql`DROP TABLE held_tokens`);
    }
    assert.equal((await get(surface.url, '/txs?count=5&tokenTag=anything')).status, 200);
  });

  it('cuts the lists to a ledger time range given in milliseconds or ISO time', async () => {
    const packaged = records.filter((r) => r.timestamp > 0);
    const since = packaged[Math.floor(packaged.length * 0.3)]!.timestamp;
    const until = packaged[Math.floor(packaged.length * 0.6)]!.timestamp;
    const inRange = (r: Tx) => r.timestamp >= since && r.timestamp < until;
    const expected = records
      .filter(inRange)
      .map((r) => r.rawId)
      .reverse();
    assert.ok(expected.length > 20, `${expected.length} records in range`);
    const iso = (ms: number) => new Date(ms).toISOString();
    assert.deepEqual(await mirrorRawIds(`since=${since}&until=${until}`), expected);
    assert.deepEqual(await mirrorRawIds(`since=${iso(since)}&until=${iso(until)}`), expected);
    const page = await get(surface.url, `/txs?page=1&since=${since}&until=${iso(until)}`);
    assert.equal(page.json['totalPages'], Math.ceil(expected.length / 10));
    const onward = records.filter((r) => r.timestamp >= since).length;
    assert.equal((await mirrorRawIds(`since=${since}`)).length, onward);
    for (const [query, error] of [
      ['since=yesterday', 'err_invalid_since'],
      ['until=2026-13-45', 'err_invalid_until'],
    ] as const) {
      const answer = await get(surface.url, `/txs?count=5&${query}`);
      assert.deepEqual([answer.status, answer.json], [400, { error }], query);
    }
  });
});

describe('read API: its metrics', () => {
  it('counts answers by route and status', async () => {
    const metrics = await fetchText(`${surface.url}/metrics`);
    const samples = parseSamples(metrics.body);
    const count = (labels: Record<string, string>) =>
      sampleSum(samples, 'ledger_indexer_read_api_requests_total', labels) ?? 0;
    assert.ok(count({ route: '/txs', status: '503' }) >= 1, 'the refused global list');
    assert.ok(count({ route: '/txs/{account}', status: '200' }) >= 1, "an account's list");
    assert.ok(count({ route: '/txs', status: '400' }) >= 2, 'the bad time ranges');
    assert.ok((sampleSum(samples, 'ledger_indexer_read_api_request_duration_seconds_count', {}) ?? 0) > 10);
  });
});

describe('read API: a role that may only read', () => {
  it("reads as LEDGER_READ_DATABASE_URL's role: served where the role may read, refused where it may not", async () => {
    const suffix = `${process.pid}_${Date.now()}`;
    const reader = `ledger_reader_${suffix}`;
    const stranger = `ledger_stranger_${suffix}`;
    const asRole = (role: string) => {
      const url = new URL(testDb.url);
      url.username = role;
      url.password = '';
      return url.toString();
    };
    const db = testDb.database.db;
    // Role names are not parameters: these are made here, of digits and letters only.
    await db.execute(sql.raw(`CREATE ROLE ${reader} LOGIN; CREATE ROLE ${stranger} LOGIN`));
    const opened: HttpSurface[] = [];
    try {
      await db.execute(sql.raw(`GRANT USAGE ON SCHEMA public TO ${reader}, ${stranger}`));
      await db.execute(sql.raw(`GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${reader}`));
      const open = async (role: string) => {
        const env = { LEDGER_READ_DATABASE_URL: asRole(role) };
        const opening = await openTestSurface({ testDb, signal: stop.signal, env });
        opened.push(opening);
        return opening;
      };
      const readOnly = await open(reader);
      const answer = await get(readOnly.url, '/txs?count=5');
      assert.equal(answer.status, 200, JSON.stringify(answer.json));
      assert.equal((answer.json['txs'] as Tx[]).length, 5);
      const feed = await get(readOnly.url, '/feed?after=0&limit=3');
      assert.equal(feed.status, 200, JSON.stringify(feed.json));
      assert.equal((feed.json['events'] as unknown[]).length, 3);
      // A role that may not read the records: the surface did not read them as the writer's role.
      const refused = await open(stranger);
      assert.deepEqual((await get(refused.url, '/txs?count=5')).status, 503);
    } finally {
      await Promise.all(opened.map((s) => s.close()));
      await db.execute(
        sql.raw(`DROP OWNED BY ${reader}, ${stranger}; DROP ROLE ${reader}; DROP ROLE ${stranger}`),
      );
    }
  });
});

describe('read API: a database that does not answer in time', () => {
  it('answers 503 err_mirror_unavailable once a read passes its timeout', async () => {
    await testDb.database.withConnection(async (db) => {
      await db.execute(sql`BEGIN`);
      try {
        await db.execute(sql`LOCK TABLE ledger_transactions IN ACCESS EXCLUSIVE MODE`);
        const started = Date.now();
        const answer = await get(surface.url, '/txs?count=5');
        assert.deepEqual([answer.status, answer.json], [503, { error: 'err_mirror_unavailable' }]);
        assert.ok(Date.now() - started < READ_STATEMENT_TIMEOUT_MS + 2000, 'within the timeout');
        // A look-up is one statement outside a transaction: the pool's sessions time it out.
        const lookUpStarted = Date.now();
        const lookUp = await get(surface.url, `/tx/0x${'ab'.repeat(32)}`);
        assert.deepEqual([lookUp.status, lookUp.json], [503, { error: 'err_mirror_unavailable' }]);
        assert.ok(Date.now() - lookUpStarted < READ_STATEMENT_TIMEOUT_MS + 2000, 'within the timeout');
      } finally {
        await db.execute(sql`ROLLBACK`);
      }
    });
    assert.equal((await get(surface.url, '/txs?count=5')).status, 200);
  });
});

describe('read API: methods and paths', () => {
  it('answers GET and HEAD; other methods 405, paths it does not serve 404', async () => {
    const head = await fetch(`${surface.url}/txs?count=1`, { method: 'HEAD' });
    assert.equal(head.status, 200);
    assert.equal(await head.text(), '');
    const post = await fetch(`${surface.url}/txs`, { method: 'POST' });
    assert.deepEqual([post.status, await post.json()], [405, { error: 'err_method_not_allowed' }]);
    assert.equal(post.headers.get('allow'), 'GET, HEAD');
    for (const path of ['/txs/a/b', '/tx', '/balance/x', '/txs//x']) {
      assert.equal((await fetch(`${surface.url}${path}`)).status, 404, path);
    }
  });
});

describe('read API: the bearer token', () => {
  it('answers 401 without the token when one is set, and the records with it', async () => {
    const refused: Array<Record<string, string>> = [
      {},
      { authorization: 'Bearer wrong-token-0123456789' },
      { authorization: TOKEN },
    ];
    for (const headers of refused) {
      const answer = await get(guarded.url, '/txs?count=1', headers);
      assert.deepEqual([answer.status, answer.json], [401, { error: 'err_unauthorized' }]);
      assert.equal(answer.headers.get('www-authenticate'), 'Bearer');
    }
    const answer = await get(guarded.url, '/txs?count=1', { authorization: `Bearer ${TOKEN}` });
    assert.equal(answer.status, 200);
    // The surface's own paths stay as they were: probes and scrapes need no token.
    assert.equal((await fetch(`${guarded.url}/health`)).status, 200);
  });

  it('asks the change feed for the token too: it serves the same records', async () => {
    const refused: Array<Record<string, string>> = [{}, { authorization: 'Bearer wrong-token-0123456789' }];
    for (const headers of refused) {
      const answer = await get(guarded.url, '/feed?after=0&wait=0s', headers);
      assert.deepEqual([answer.status, answer.json], [401, { error: 'err_unauthorized' }]);
    }
    const answer = await get(guarded.url, '/feed?after=0&wait=0s', { authorization: `Bearer ${TOKEN}` });
    assert.equal(answer.status, 200);
    assert.ok(Array.isArray((answer.json as { events?: unknown }).events));
  });

  it('serve and worker refuse to bind beyond loopback without a token: one line, exit 2', async () => {
    const port = await freePort();
    const run = await runMain(['serve', '--http-port', String(port)], {
      DATABASE_URL: testDb.url,
      LEDGER_HTTP_HOST: '0.0.0.0',
      LOG_LEVEL: 'silent',
    });
    assert.equal(run.code, 2, run.out + run.err);
    assert.match(run.err, /LEDGER_HTTP_TOKEN: is required to serve the mirror on 0\.0\.0\.0/);
    assert.equal(run.err.trim().split('\n').length, 1, run.err);
    const worker = await runMain(['worker', '--http-port', String(port)], {
      ...env,
      REDIS_URL: 'redis://127.0.0.1:6379',
      LEDGER_HTTP_HOST: '10.1.2.3',
    });
    assert.equal(worker.code, 2, worker.out + worker.err);
    assert.match(worker.err, /LEDGER_HTTP_TOKEN: is required to serve the mirror on 10\.1\.2\.3/);
    assert.equal(worker.err.trim().split('\n').length, 1, worker.err);
  });
});
