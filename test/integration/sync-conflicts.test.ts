import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import type { LedgerTx } from '../../src/domain/model.js';
import {
  createTestDatabase,
  makeHashedLedgerTx,
  makeLedgerTx,
  type TestDatabase,
} from '../helpers/database.js';
import { startHttpServer, type TestHttpServer } from '../helpers/http-server.js';
import { runMain } from '../helpers/run-main.js';

/** The real `ledgerHash` of the record `makeHashedLedgerTx` makes for `rawId`. */
const hashOf = (rawId: number): string => makeHashedLedgerTx({ rawId }).ledgerHash;

const run = runMain;

/** A ledger service on port 0 serving `pages` (each a list of records, newest first) as `/txs`. */
async function startLedger(): Promise<{ server: TestHttpServer; pages: LedgerTx[][] }> {
  const state = { pages: [] as LedgerTx[][] };
  const wire = ({ internalStatusParsed: _parsed, ...tx }: LedgerTx) => tx;
  const server = await startHttpServer((request) => {
    if (request.path === '/info') return { body: { tokenList: [] } };
    if (request.path.startsWith('/txsByHash/')) {
      const hash = request.path.slice('/txsByHash/'.length);
      const tx = state.pages.flat().find((r) => r.ledgerHash === hash);
      return tx ? { body: { tx: wire(tx) } } : { status: 404, body: { error: 'err_not_found' } };
    }
    if (request.path === '/txs') {
      const page = Number(request.query.get('page') ?? '1');
      const txs = (state.pages[page - 1] ?? []).map(wire);
      return { body: { currentPage: page, totalPages: state.pages.length, txs } };
    }
    return { status: 404, body: { error: 'err_not_found' } };
  });
  return {
    server,
    get pages() {
      return state.pages;
    },
    set pages(value: LedgerTx[][]) {
      state.pages = value;
    },
  };
}

/** Records `hi` down to `lo`, ten a page. */
function paginate(records: LedgerTx[]): LedgerTx[][] {
  const sorted = [...records].sort((a, b) => b.rawId - a.rawId);
  const pages: LedgerTx[][] = [];
  for (let i = 0; i < sorted.length; i += 10) pages.push(sorted.slice(i, i + 10));
  return pages;
}

const range = (lo: number, hi: number) => Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);

interface ConflictRow {
  raw_id: string;
  fields: string[];
  stored_amount: string;
  served_amount: string;
  stored_hash: string;
  served_hash: string;
  stream_key: string | null;
  page: number | null;
  run_id: string | null;
  seen_count: number;
}

describe('conflicting content for one rawId', () => {
  let db: TestDatabase;
  let ledger: Awaited<ReturnType<typeof startLedger>>;
  let env: Record<string, string>;
  const q = <T>(query: ReturnType<typeof sql>) => queryRows<T>(db.database.db, query);
  const conflicts = () =>
    q<ConflictRow>(sql`
      SELECT raw_id::text, fields, stored->>'amount' AS stored_amount, served->>'amount' AS served_amount,
             stored->>'ledger_hash' AS stored_hash, served->>'ledger_hash' AS served_hash, stream_key, page,
             run_id::text, seen_count
      FROM ledger_tx_conflicts c ORDER BY c.raw_id`);

  before(async () => {
    ledger = await startLedger();
    env = {
      LEDGER_BASE_URL: ledger.server.baseUrl,
      LEDGER_REQUESTS_PER_SECOND: '0',
      LEDGER_RETRIES: '0',
      LOG_LEVEL: 'silent',
    };
  });
  after(async () => {
    await ledger.server.close();
  });

  describe('served again in a later run', () => {
    before(async () => {
      db = await createTestDatabase();
      env = { ...env, DATABASE_URL: db.url };
    });
    after(async () => {
      await db.drop();
    });

    it('keeps the stored record, records both versions with stream and page, and counts them', async () => {
      const confirmed = makeHashedLedgerTx({ rawId: 22, status: 'confirmed', id: '', timestamp: 0 });
      const first = range(1, 25).map((rawId) => (rawId === 22 ? confirmed : makeHashedLedgerTx({ rawId })));
      ledger.pages = paginate(first);
      const initial = await run(['sync'], env);
      assert.equal(initial.code, 0, initial.err);
      assert.match(initial.out, /25 new, 0 changed, 0 rejected\)/);

      // Two arrivals push page 1 down; 24 comes back with another amount, 23 with another hash,
      // and 22 is packaged (a legitimate change).
      ledger.pages = paginate([
        ...first.map((tx) => {
          if (tx.rawId === 24) return { ...tx, amount: '999' };
          if (tx.rawId === 23) return { ...tx, ledgerHash: '0xforged23' };
          if (tx.rawId === 22) return { ...tx, status: 'packaged', id: 'b2', timestamp: 1_700_000_000_000 };
          return tx;
        }),
        makeHashedLedgerTx({ rawId: 26 }),
        makeHashedLedgerTx({ rawId: 27 }),
      ]);
      const second = await run(['sync'], env);
      assert.equal(second.code, 0, second.err);
      assert.match(
        second.out,
        /txs: tail, 1 pages, 10 records \(2 new, 1 changed, 0 rejected, 2 conflicting/,
      );

      const stored = await q<{ raw_id: string; amount: string; ledger_hash: string; status: string }>(
        sql`SELECT raw_id::text, amount::text, ledger_hash, status FROM ledger_transactions t
            WHERE raw_id IN (22, 23, 24) ORDER BY t.raw_id`,
      );
      assert.deepEqual(stored, [
        { raw_id: '22', amount: '1000', ledger_hash: hashOf(22), status: 'packaged' },
        { raw_id: '23', amount: '1000', ledger_hash: hashOf(23), status: 'packaged' },
        { raw_id: '24', amount: '1000', ledger_hash: hashOf(24), status: 'packaged' },
      ]);
      const [run2] = await q<{ id: string; conflicts: number }>(
        sql`SELECT id::text, conflicts FROM sync_runs ORDER BY id DESC LIMIT 1`,
      );
      assert.equal(run2?.conflicts, 2);
      assert.deepEqual(await conflicts(), [
        {
          raw_id: '23',
          fields: ['ledger_hash'],
          stored_amount: '1000',
          served_amount: '1000',
          stored_hash: hashOf(23),
          served_hash: '0xforged23',
          stream_key: 'txs',
          page: 1,
          run_id: run2?.id ?? null,
          seen_count: 1,
        },
        {
          raw_id: '24',
          fields: ['amount'],
          stored_amount: '1000',
          served_amount: '999',
          stored_hash: hashOf(24),
          served_hash: hashOf(24),
          stream_key: 'txs',
          page: 1,
          run_id: run2?.id ?? null,
          seen_count: 1,
        },
      ]);
    });

    it('reports the conflicts in status and verify (exit 1), and counts a conflict seen again', async () => {
      const status = await run(['status', '--json'], { ...env, LEDGER_BASE_URL: '' });
      assert.equal(status.code, 0, status.err);
      const json = JSON.parse(status.out) as {
        conflicts: number;
        streams: Array<{ key: string; conflicts: number }>;
      };
      assert.equal(json.conflicts, 2);
      assert.deepEqual(
        json.streams.map((s) => [s.key, s.conflicts]),
        [['txs', 2]],
      );

      const verify = await run(['verify'], env);
      assert.equal(verify.code, 1, verify.out);
      assert.match(verify.out, /txs: INCOMPLETE/);
      assert.match(verify.out, /problem: 2 record version\(s\) served with immutable fields different/);
      assert.match(
        verify.out,
        new RegExp(`rawId 23 \\(txs page 1, .*\\): ledger_hash ${hashOf(23).slice(0, 40)}… -> 0xforged23`),
      );
      assert.match(verify.out, /rawId 24 \(txs page 1, .*\): amount 1000 -> 999/);
      const verifyJson = await run(['verify', '--json'], env);
      assert.equal(verifyJson.code, 1);
      const report = JSON.parse(verifyJson.out) as { complete: boolean; conflicts: { total: number } };
      assert.equal(report.complete, false);
      assert.equal(report.conflicts.total, 2);

      const again = await run(['sync'], { ...env });
      assert.equal(again.code, 0, again.err);
      assert.match(again.out, /2 conflicting/);
      assert.deepEqual(
        (await conflicts()).map((c) => [c.raw_id, c.seen_count]),
        [
          ['23', 2],
          ['24', 2],
        ],
      );

      // Once looked into and resolved (the stored versions kept), verify passes again, the
      // service still serving the other versions; a sync seeing them again keeps them resolved.
      await db.database.db.execute(sql`UPDATE ledger_tx_conflicts SET resolved_at = now()`);
      assert.equal((await run(['verify'], env)).code, 0);
      const resolvedStatus = JSON.parse((await run(['status', '--json'], env)).out) as { conflicts: number };
      assert.equal(resolvedStatus.conflicts, 0);
      assert.equal((await run(['sync'], { ...env })).code, 0);
      assert.equal((await run(['verify'], env)).code, 0);
    });
  });

  describe('served again on a later page of the same walk', () => {
    before(async () => {
      db = await createTestDatabase();
      env = { ...env, DATABASE_URL: db.url };
    });
    after(async () => {
      await db.drop();
    });

    it('keeps the first sighting and records the later one as a conflict with its page', async () => {
      // Page 2 repeats rawId 11 (the list shifted) with another amount, page 3 rawId 6 with another sig.
      const records = range(1, 20).map((rawId) => makeLedgerTx({ rawId }));
      const pages = paginate(records);
      ledger.pages = [
        pages[0] ?? [],
        [makeLedgerTx({ rawId: 11, amount: '5' }), ...(pages[1] ?? []).slice(0, 5)],
        [makeLedgerTx({ rawId: 6, sig: '0xother' }), ...(pages[1] ?? []).slice(5)],
      ];
      const result = await run(['sync'], env);
      assert.equal(result.code, 0, result.err);
      assert.match(result.out, /20 new, 0 changed, 0 rejected, 2 conflicting/);
      const stored = await q<{ raw_id: string; amount: string; sig: string }>(
        sql`SELECT raw_id::text, amount::text, sig FROM ledger_transactions t WHERE raw_id IN (6, 11) ORDER BY t.raw_id`,
      );
      assert.deepEqual(stored, [
        { raw_id: '6', amount: '1000', sig: '0xsig' },
        { raw_id: '11', amount: '1000', sig: '0xsig' },
      ]);
      assert.deepEqual(
        (await conflicts()).map((c) => [c.raw_id, c.fields, c.stored_amount, c.served_amount, c.page]),
        [
          ['6', ['sig'], '1000', '1000', 3],
          ['11', ['amount'], '1000', '5', 2],
        ],
      );
    });
  });
});
