import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { type Database, openDatabase } from '../../src/db/connect.js';
import { countNonFinal, countRejected, listStreams } from '../../src/db/queries/stream-queries.js';
import { queryRows } from '../../src/db/rows.js';
import { migrateDatabase } from '../../src/db/schema/migrate-database.js';
import { createPgStore } from '../../src/db/stores/pg-sync-store.js';
import { upsertTokens } from '../../src/db/stores/tokens.js';
import { LeaseLostError } from '../../src/errors.js';
import { makeLedgerTx } from '../helpers/database.js';

const BIG = '9'.repeat(78);

describe('the embedded database (PGlite)', () => {
  let dir: string;
  let database: Database;

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ledger-indexer-pglite-'));
    database = await openDatabase({ dataDir: dir });
  });
  after(async () => {
    await database?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('runs the same migrations and store, and keeps the data across a reopen', async () => {
    assert.equal(database.kind, 'pglite');
    await migrateDatabase(database);
    await migrateDatabase(database);
    let clock = new Date('2026-03-01T00:00:00Z');
    const store = createPgStore({ database, now: () => clock });
    await upsertTokens(database, [
      {
        tag: 'ethereum-usdc-0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
        symbol: 'USDC',
        decimals: 6,
        chainType: 'ethereum',
        chainID: '1',
        id: '0xa0b8',
        raw: {},
      },
    ]);
    const { lease } = await store.acquireStream({}, 'a', 60_000);
    await assert.rejects(store.acquireStream({}, 'b', 60_000), LeaseLostError);
    const bundle = JSON.stringify({
      bundle: { items: [{ tag: 't', chainID: '1', from: 'f', to: 'g', amount: BIG }] },
    });
    const counts = await store.commitPage({
      lease,
      pages: [
        {
          page: 1,
          records: [
            makeLedgerTx({ rawId: 1, amount: BIG }),
            makeLedgerTx({ rawId: 2, status: 'confirmed', timestamp: 0, action: 'bundle', data: bundle }),
            makeLedgerTx({ rawId: 3, amount: 'nope' }),
          ],
        },
      ],
      rejected: [{ reason: 'no rawId', raw: '{}' }],
      walk: { mode: 'backfill', nextPage: 2, headRawId: 2, totalPages: 3 },
      watermark: null,
    });
    assert.deepEqual(counts, { inserted: 2, updated: 0, unchanged: 0, rejected: 2, conflicts: 0 });
    const again = await store.commitPage({
      lease,
      pages: [{ page: 1, records: [makeLedgerTx({ rawId: 1, amount: BIG })] }],
      rejected: [],
      walk: null,
      watermark: 2,
    });
    assert.deepEqual(again, { inserted: 0, updated: 0, unchanged: 1, rejected: 0, conflicts: 0 });
    clock = new Date(clock.getTime() + 30_000);
    const due = await store.duePending(10, clock);
    assert.deepEqual(
      due.map((d) => d.rawId),
      [2],
    );
    await store.commitReread({
      records: [makeLedgerTx({ rawId: 2, action: 'bundle', data: bundle })],
      missing: [],
      now: clock,
    });
    await store.releaseStream(lease, { ok: true });
    assert.deepEqual(await countNonFinal(database.db, clock), { notPackaged: 0, queued: 0, due: 0 });
    assert.deepEqual(await countRejected(database.db), { distinct: 2, sightings: 2 });

    await database.close();
    database = await openDatabase({ dataDir: dir });
    const rows = await queryRows<{ raw_id: string; amount: string; token_tag: string }>(
      database.db,
      sql`SELECT raw_id::text, amount::text, token_tag FROM ledger_transactions ORDER BY raw_id`,
    );
    assert.deepEqual(rows, [
      { raw_id: '1', amount: BIG, token_tag: 'ethereum-usdc-0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48' },
      { raw_id: '2', amount: '1000', token_tag: 'ethereum-usdc-0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48' },
    ]);
    const items = await queryRows<{ amount: string }>(
      database.db,
      sql`SELECT amount::text FROM ledger_bundle_items`,
    );
    assert.deepEqual(items, [{ amount: BIG }]);
    const [stream] = await listStreams(database.db);
    assert.equal(stream?.watermark, 2);
    assert.equal(stream?.lastSuccessAt?.toISOString(), clock.toISOString());
  });
});
