/**
 * Records encoded for a COPY on another thread: the thread's encoding of an answer is the one
 * the main thread makes from the answer's text; an encoding it cannot make
 * is missing, never wrong; and a sync by key whose commits copy the thread's encodings ends
 * equal, table by table, to one that encodes on the main thread, and to the simulator.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { createContext } from '../../src/app/context.js';
import { createCopyEncoder } from '../../src/app/encoding/copy-encoder.js';
import { createFetchKeyPage, createFetchKeyText } from '../../src/app/sync-adapters.js';
import { syncOnce } from '../../src/app/sync-once.js';
import { parseTxKeyPage } from '../../src/client/page.js';
import { loadConfig } from '../../src/config.js';
import type { Database } from '../../src/db/connect.js';
import { queryRows } from '../../src/db/rows.js';
import { type CopyEncoder, type CopyEncoding, encodeForCopy } from '../../src/db/write/copy-encoding.js';
import { loadFastKeccak } from '../../src/domain/keccak.js';
import { silentLogger } from '../../src/logger.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { fetchKeyRange } from '../../src/sync/backfill/key-backfill.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { assertMirrorsTruth } from './sync-truth.js';

const simulators: Simulator[] = [];
const databases: TestDatabase[] = [];
const encoders: CopyEncoder[] = [];
after(async () => {
  for (const encoder of encoders) await encoder.close();
  for (const sim of simulators) await sim.close();
  for (const db of databases) await db.drop();
});

async function simulator(records: number) {
  const sim = createSimulator({ records, seed: 23, packageDelayMs: 0, burnTargetDelayMs: 0 });
  simulators.push(sim);
  const { url } = await sim.listen();
  return { sim, url };
}

/** An encoder of one thread, ready to read. */
async function encoder(): Promise<CopyEncoder> {
  const made = createCopyEncoder({ threads: 1 });
  encoders.push(made);
  assert.equal(await made.ready(), true);
  return made;
}

/** A fresh database and a context reading `url` by key, its commits encoded by `copyEncoder` (`null`: here). */
async function keyContext(url: string, copyEncoder: CopyEncoder | null) {
  const t = await createTestDatabase();
  databases.push(t);
  const config = loadConfig({ LEDGER_BASE_URL: url, LEDGER_PAGING: 'key', LEDGER_REQUESTS_PER_SECOND: '0' });
  const ctx = await createContext({ config, logger: silentLogger(), database: t.database, copyEncoder });
  return { t, ctx };
}

/** An encoding with its bytes as Buffers, so one made here and one sent back compare equal. */
function comparable(encoding: CopyEncoding | null | undefined) {
  if (encoding === null || encoding === undefined) return encoding;
  return { ...encoding, lines: Buffer.from(encoding.lines), items: Buffer.from(encoding.items) };
}

const OPTIONS = { now: new Date('2026-01-02T03:04:05Z'), burnWindowMs: 86_400_000 };

describe('records encoded for a COPY on another thread', () => {
  it("encodes an answer's records as the main thread does, bundle items included; a window with none is an empty encoding", async () => {
    await loadFastKeccak();
    const { url } = await simulator(400);
    const answers = await Promise.all(
      [0, 150].map(async (cursor) => {
        const text = await (await fetch(`${url}/txs?cursor=${cursor}&order=asc&count=100`)).text();
        // A range keeps the records up to its top: a part of the answer, as a walk by key does.
        const window = { after: cursor === 0 ? null : cursor, upTo: cursor + 80 };
        const records = parseTxKeyPage(text, url).txs.filter((tx) => tx.rawId <= window.upTo);
        return { text, window, records };
      }),
    );
    assert.ok(answers.every((a) => a.records.length > 50));
    assert.ok(
      answers.some((a) => a.records.some((tx) => tx.action === 'bundle')),
      'the answers hold a bundle',
    );
    const threaded = await encoder();
    const made = await Promise.all(answers.map((a) => threaded.read(a.text, a.window, OPTIONS)));
    for (const [i, answer] of answers.entries()) {
      const here = encodeForCopy(answer.records, OPTIONS);
      assert.ok(here !== null);
      assert.ok(here.items.length > 0 || i === 1, 'bundle items encoded');
      assert.deepEqual(comparable(made[i]?.encoding ?? null), comparable(here));
    }
    // An answer whose records all lie past its range's top: an empty encoding, the commit still copies.
    const past = await threaded.read(answers[1]!.text, { after: null, upTo: 100 }, OPTIONS);
    assert.equal(past?.encoding?.rawIds.length, 0);
  });

  it('reads an answer from its text alone: what a walk needs of it, and the encoding of its window', async () => {
    await loadFastKeccak();
    const { url } = await simulator(400);
    const text = await (await fetch(`${url}/txs?cursor=100&order=asc&count=100`)).text();
    const answer = parseTxKeyPage(text, url);
    const threaded = await encoder();
    const read = await threaded.read(text, { after: 150, upTo: 180 }, OPTIONS);
    assert.ok(read !== null);
    assert.equal(read.hasNextPage, answer.hasNextPage);
    assert.deepEqual(
      read.rawIds,
      answer.txs.map((tx) => tx.rawId),
    );
    assert.deepEqual(
      read.timestamps,
      answer.txs.map((tx) => tx.timestamp),
    );
    assert.equal(read.rejected, 0);
    // Only the window's records are encoded, as the main thread encodes them.
    const window = answer.txs.filter((tx) => tx.rawId > 150 && tx.rawId <= 180);
    assert.ok(window.length > 10);
    assert.deepEqual(comparable(read.encoding), comparable(encodeForCopy(window, OPTIONS)));
    // Read without an encoding when none is wanted (a repair's records are stored already).
    const unencoded = await threaded.read(text, { after: 150, upTo: 180, encode: false }, OPTIONS);
    assert.ok(unencoded !== null);
    assert.equal(unencoded.encoding, null);
    assert.deepEqual(unencoded.rawIds, read.rawIds);
    assert.deepEqual(unencoded.timestamps, read.timestamps);
    // Text that is not a key answer is the walk's to read again: no answer, and no encoding.
    assert.equal(
      await threaded.read(text.slice(0, text.length / 2), { after: null, upTo: 400 }, OPTIONS),
      null,
    );
    assert.equal(await threaded.read('{"txs":[],"totalPages":3}', { after: null, upTo: 400 }, OPTIONS), null);
  });

  it('sends back an answer with a record set aside without an encoding, the rest of it read', async () => {
    const { url } = await simulator(300);
    const answer = JSON.parse(await (await fetch(`${url}/txs?cursor=0&order=asc&count=20`)).text());
    answer.txs[3].amount = 12.5; // an amount must be a decimal string
    const read = await (await encoder()).read(JSON.stringify(answer), { after: null, upTo: 300 }, OPTIONS);
    assert.ok(read !== null);
    assert.equal(read.rejected, 1);
    assert.equal(read.encoding, null);
    assert.equal(read.rawIds.length, 19);
  });

  it('reads nothing until its thread is ready: the first reads are missing at once, not held up by its start', async () => {
    const { url } = await simulator(200);
    const text = await (await fetch(`${url}/txs?cursor=0&order=asc&count=100`)).text();
    const starting = createCopyEncoder({ threads: 1, threadsFrom: 0 });
    encoders.push(starting);
    const window = { after: null, upTo: 1000 };
    // The first read starts the thread and is read by the walk itself.
    assert.equal(await starting.read(text, window, OPTIONS), null);
    assert.equal(starting.started, true);
    assert.equal(await starting.ready(), true);
    const read = await starting.read(text, window, OPTIONS);
    assert.equal(read?.rawIds.length, parseTxKeyPage(text, url).txs.length);
    assert.ok(read?.encoding !== null && read?.encoding !== undefined);
    // None to start, or closed: never ready.
    assert.equal(await createCopyEncoder({ threads: 0 }).ready(), false);
    await starting.close();
    assert.equal(await starting.ready(), false);
  });

  it('starts its thread only once answers come fast enough: a walk reading a few a second parses them itself', async () => {
    const { url } = await simulator(200);
    const text = await (await fetch(`${url}/txs?cursor=0&order=asc&count=100`)).text();
    let clock = 0;
    const encoder = createCopyEncoder({ threads: 1, threadsFrom: 5, now: () => clock });
    encoders.push(encoder);
    const window = { after: null, upTo: 1000 };
    // Four a second, for three seconds: never five within a second.
    for (let i = 0; i < 12; i++, clock += 250) assert.equal(await encoder.read(text, window, OPTIONS), null);
    assert.equal(encoder.started, false);
    // A pause, then five within a second: the fifth starts the thread, and is read by the walk
    // itself as the thread loads.
    clock += 1000;
    for (let i = 0; i < 4; i++, clock += 100) assert.equal(await encoder.read(text, window, OPTIONS), null);
    assert.equal(encoder.started, false);
    assert.equal(await encoder.read(text, window, OPTIONS), null);
    assert.equal(encoder.started, true);
    assert.equal(await encoder.ready(), true);
    assert.ok((await encoder.read(text, window, OPTIONS))?.encoding);
  });

  it('encodes nothing once closed: what is owed resolves to missing', async () => {
    const { url } = await simulator(200);
    const text = await (await fetch(`${url}/txs?cursor=0&order=asc&count=100`)).text();
    const records = parseTxKeyPage(text, url).txs;
    assert.ok(records.length > 0);
    const threaded = createCopyEncoder({ threads: 1 });
    await threaded.close();
    assert.equal(await threaded.read(text, { after: null, upTo: 1000 }, OPTIONS), null);
    const none = createCopyEncoder({ threads: 0 });
    assert.equal(await none.read(text, { after: null, upTo: 1000 }, OPTIONS), null);
  });

  it('writes a range read ahead over records stored already the full way, its answers parsed on the main thread', async () => {
    const { sim, url } = await simulator(1_000);
    const copyEncoder = counting(await encoder());
    const { t, ctx } = await keyContext(url, copyEncoder.encoder);
    try {
      const store = ctx.backfills;
      assert.ok(store?.readAhead !== undefined, 'the store reads answers ahead on PostgreSQL');
      const walk = async (id: string, stored?: boolean) => {
        await store.startRun({ id, key: 'txs', headRawId: 2_000, totalPages: 0 });
        return fetchKeyRange({
          store,
          fetchKeyPage: createFetchKeyPage(ctx.client),
          fetchKeyText: createFetchKeyText(ctx.client),
          spec: {},
          backfillId: id,
          task: { after: null, upTo: 2_000 },
          stored,
        });
      };
      const first = await walk('first');
      assert.equal(first.counts.inserted, 1_000);
      const read = copyEncoder.made;
      assert.ok(read >= 10, 'every answer read on the thread');
      // The same range again: every record is stored, the copy fails on the unique index, and
      // the records held with their answers are parsed here for the full write.
      const again = await walk('again');
      assert.equal(copyEncoder.made, read * 2);
      assert.equal(again.counts.inserted, 0);
      assert.equal(again.counts.unchanged + again.counts.updated, 1_000);
      // Known to be stored (a repair): the thread reads every answer and encodes none.
      const missedBefore = copyEncoder.missed;
      const repaired = await walk('repair', true);
      assert.equal(copyEncoder.made, read * 2, 'no encoding made for records stored already');
      assert.equal(copyEncoder.missed - missedBefore, read, 'every answer still read on the thread');
      assert.equal(repaired.counts.inserted, 0);
      assert.equal(repaired.counts.unchanged + repaired.counts.updated, 1_000);
    } finally {
      await ctx.close();
    }
    await assertMirrorsTruth(t.database.db, sim);
  });

  it('a repair (sync --full) reads its answers on the thread without encoding them, and ends equal to the service', async () => {
    const { sim, url } = await simulator(3_000);
    const copyEncoder = counting(await encoder());
    const { t, ctx } = await keyContext(url, copyEncoder.encoder);
    try {
      assert.equal((await syncOnce(ctx, {})).streams[0]?.finished, true);
      const { made, missed } = copyEncoder;
      assert.ok(made > 0, 'the first backfill copied encodings');
      const repaired = await syncOnce(ctx, { full: true });
      assert.equal(repaired.streams[0]?.finished, true);
      assert.equal(copyEncoder.made, made, 'no encoding made for records stored already');
      assert.ok(copyEncoder.missed - missed >= 20, 'the repair read its answers on the thread');
    } finally {
      await ctx.close();
    }
    await assertMirrorsTruth(t.database.db, sim);
  });

  it('a sync by key copying the thread’s encodings ends equal to one encoding on the main thread', async () => {
    const { sim, url } = await simulator(3_000);
    const tables = async (database: Database) =>
      Promise.all(
        [
          sql`SELECT raw_id, token_tag, hash_check, status, internal_status_json::text, ledger_time, data
              FROM ledger_transactions ORDER BY raw_id`,
          sql`SELECT * FROM ledger_bundle_items ORDER BY raw_id, item_index`,
          sql`SELECT raw_id, status, internal_status FROM ledger_tx_status_history ORDER BY raw_id, id`,
          sql`SELECT raw_id, pending FROM ledger_tx_rechecks ORDER BY raw_id`,
        ].map((query) => queryRows(database.db, query)),
      );
    const ended = [];
    for (const copyEncoder of [counting(await encoder()), null]) {
      const { t, ctx } = await keyContext(url, copyEncoder?.encoder ?? null);
      try {
        const result = await syncOnce(ctx, {});
        assert.equal(result.streams[0]?.finished, true);
      } finally {
        await ctx.close();
      }
      if (copyEncoder !== null) {
        assert.ok(copyEncoder.made > 0, "commits copied the thread's encodings");
        assert.equal(copyEncoder.missed, 0, 'every commit of the lanes found its encodings');
      }
      await assertMirrorsTruth(t.database.db, sim);
      ended.push(await tables(t.database));
    }
    assert.deepEqual(ended[0], ended[1]);
  });
});

/** An encoder that counts the commits it gave encodings to, and those it had none for. */
function counting(inner: CopyEncoder): { encoder: CopyEncoder; made: number; missed: number } {
  const counted = { made: 0, missed: 0, encoder: inner };
  counted.encoder = {
    read: async (text, window, options) => {
      const read = await inner.read(text, window, options);
      if (read?.encoding != null) counted.made++;
      else counted.missed++;
      return read;
    },
    ready: () => inner.ready(),
    get started() {
      return inner.started;
    },
    close: () => inner.close(),
  };
  return counted;
}
