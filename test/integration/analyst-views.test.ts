import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import pg from 'pg';
import { queryRows } from '../../src/db/rows.js';
import { packageRoot } from '../../src/paths.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { runMain } from '../helpers/run-main.js';

const run = runMain;

interface TruthRecord {
  rawId: number;
  action: string;
  from: string;
  to: string;
  amount: string;
  fee: string;
  data: string;
  tokenTag: string;
  timestamp: number;
  internalStatus: string;
}

/** The inner status of `internalStatus`: a JSON object's `status`, or the bare word of old records. */
function internalCode(internalStatus: string): string {
  try {
    const parsed = JSON.parse(internalStatus) as { status?: unknown };
    return typeof parsed === 'object' && parsed !== null ? String(parsed.status) : String(parsed);
  } catch {
    return internalStatus;
  }
}

/**
 * What `ledger_daily_volume` should hold, from the simulator's records, summed as BigInt: per
 * day of `timestamp`, token and action, the movements (a record, or each item of a successful
 * bundle, under the item's token), their amounts, and their fees (a bundle's on its first item;
 * a failed bundle's, which moved nothing, under the bundle's token).
 */
function expectedDailyVolume(truth: readonly TruthRecord[]): Map<string, string> {
  const sums = new Map<string, { movements: number; volume: bigint; fees: bigint }>();
  const add = (key: string, amount: string, fee: string, moved = true) => {
    const sum = sums.get(key) ?? { movements: 0, volume: 0n, fees: 0n };
    if (moved) sum.movements += 1;
    sum.volume += BigInt(amount);
    sum.fees += BigInt(fee);
    sums.set(key, sum);
  };
  for (const r of truth) {
    if (r.timestamp === 0) continue;
    const day = new Date(r.timestamp).toISOString().slice(0, 10);
    if (r.action !== 'bundle') {
      add(`${day} ${r.tokenTag} ${r.action}`, r.amount, r.fee);
      continue;
    }
    // A failed bundle moved nothing, but its fee was taken.
    if (internalCode(r.internalStatus) !== 'success') {
      if (BigInt(r.fee) !== 0n) add(`${day} ${r.tokenTag} bundle`, '0', r.fee, false);
      continue;
    }
    const { items } = (JSON.parse(r.data) as { bundle: { items: Array<{ tag: string; amount: string }> } })
      .bundle;
    for (const [i, item] of items.entries())
      add(`${day} ${item.tag} bundle`, item.amount, i === 0 ? r.fee : '0');
  }
  return new Map(
    [...sums].map(([key, s]) => [key, `${s.movements} ${s.volume.toString()} ${s.fees.toString()}`]),
  );
}

const accountKey = (a: string) => (/^0x[0-9a-fA-F]{40}$/.test(a) ? a.toLowerCase() : a);

/** The example statements for one account (`$1`) in docs/analytics.md: its balances, then its movements. */
function documentedAccountExamples(): [string, string] {
  const doc = readFileSync(join(packageRoot, 'docs', 'analytics.md'), 'utf8');
  const block = /^-- an account's balances.*\n(?:--.*\n)*([\s\S]*?)\n\n/m.exec(doc)?.[1] ?? '';
  const statements = block
    .split(';')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  assert.equal(statements.length, 2, `the two account examples of docs/analytics.md:\n${block}`);
  return [statements[0]!, statements[1]!];
}

describe('analyst views against the simulator', () => {
  let db: TestDatabase;
  let sim: Simulator;
  let url: string;
  let truth: TruthRecord[];
  let env: Record<string, string>;

  before(async () => {
    db = await createTestDatabase();
    sim = createSimulator({ records: 600, seed: 31, arrivalsPerSecond: 0 });
    url = (await sim.listen()).url;
    env = { DATABASE_URL: db.url, LEDGER_BASE_URL: url, LOG_LEVEL: 'silent' };
    assert.equal((await run(['sync'], env)).code, 0);
    truth = (await (await fetch(`${url}/_sim/records`)).text())
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as TruthRecord);
  });
  after(async () => {
    await sim.close();
    await db.drop();
  });

  it('ledger_account_balances equals /balances/{account} for every account, token by token', async () => {
    const rows = await queryRows<{ account: string; token_tag: string; balance: string }>(
      db.database.db,
      sql`SELECT account, token_tag, balance::text AS balance FROM ledger_account_balances`,
    );
    const mine = new Map<string, Map<string, string>>();
    for (const row of rows) {
      if (!mine.has(row.account)) mine.set(row.account, new Map());
      if (row.balance !== '0') mine.get(row.account)!.set(row.token_tag, row.balance);
    }
    const accounts = new Set([
      ...mine.keys(),
      ...truth.flatMap((r) => [accountKey(r.from), accountKey(r.to)]),
    ]);
    assert.ok(accounts.size > 20, `many accounts (${accounts.size})`);
    let compared = 0;
    for (const account of accounts) {
      const answer = (await (await fetch(`${url}/balances/${account}`)).json()) as {
        balances: Array<{ tag: string; amount: string }>;
      };
      const service = new Map(answer.balances.filter((b) => b.amount !== '0').map((b) => [b.tag, b.amount]));
      assert.deepEqual(
        Object.fromEntries(mine.get(account) ?? []),
        Object.fromEntries(service),
        `balances of ${account}`,
      );
      compared += service.size;
    }
    assert.ok(compared > 20, 'non-zero balances were compared');
  });

  it("ledger_movements has the non-bundle records and only successful bundles' items; volumes add up", async () => {
    const [counts] = await queryRows<{ records: string; items: string; failed_items: string }>(
      db.database.db,
      sql`SELECT count(*) FILTER (WHERE item_index IS NULL)::text AS records,
                 count(*) FILTER (WHERE item_index IS NOT NULL)::text AS items,
                 count(*) FILTER (WHERE item_index IS NOT NULL AND internal_status_code <> 'success')::text AS failed_items
          FROM ledger_movements`,
    );
    assert.equal(Number(counts?.records), truth.filter((r) => r.action !== 'bundle').length);
    assert.equal(counts?.failed_items, '0');
    const failedBundles = truth.filter((r) => r.action === 'bundle' && r.internalStatus.includes('failed'));
    const [failed] = await queryRows<{ n: string }>(
      db.database.db,
      sql`SELECT count(*)::text AS n FROM ledger_bundle_items b JOIN ledger_transactions t USING (raw_id)
          WHERE t.internal_status_code = 'failed'`,
    );
    if (failedBundles.length > 0)
      assert.ok(Number(failed?.n) > 0, 'failed bundles have items, kept out of movements');
  });

  it("ledger_daily_volume equals the simulator's records per day, token and action, exactly", async () => {
    const rows = await queryRows<{ key: string; sums: string }>(
      db.database.db,
      sql`SELECT day::text || ' ' || token_tag || ' ' || action AS key,
                 movements::text || ' ' || volume::text || ' ' || fees::text AS sums
          FROM ledger_daily_volume`,
    );
    const expected = expectedDailyVolume(truth);
    assert.deepEqual(Object.fromEntries(rows.map((r) => [r.key, r.sums])), Object.fromEntries(expected));
    // Every kind is there: mints, transfers, bundles' items, and fees.
    for (const action of ['mint', 'transfer', 'burn', 'bundle'])
      assert.ok(
        [...expected.keys()].some((key) => key.endsWith(` ${action}`)),
        action,
      );
    const fees = (action: string) =>
      [...expected].filter(([key, sums]) => key.endsWith(` ${action}`) && !sums.endsWith(' 0')).length;
    assert.ok(fees('transfer') > 0 && fees('bundle') > 0, 'fees of transfers and bundles compared');
    const failedWithFee = truth.filter(
      (r) =>
        r.action === 'bundle' &&
        r.timestamp !== 0 &&
        internalCode(r.internalStatus) !== 'success' &&
        r.fee !== '0',
    );
    assert.ok(failedWithFee.length > 0, "failed bundles' fees compared");
  });

  it("ledger_daily_volume counts every bundle's fee the balances view counts, once, a bundle with no items included", async () => {
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      await client.query('BEGIN');
      // A packaged, successful bundle whose data lists no items: nothing moved, but its fee was taken.
      await client.query(`CREATE TEMP TABLE odd ON COMMIT DROP AS
        SELECT * FROM ledger_transactions WHERE action = 'bundle' AND internal_status_code = 'success' LIMIT 1`);
      await client.query(`UPDATE odd SET raw_id = 900000001, ledger_hash = '0xodd', data = '', fee = 7,
        timestamp_ms = 1893456000000, ledger_time = '2030-01-01T00:00:00Z'`);
      await client.query('INSERT INTO ledger_transactions SELECT * FROM odd');
      const { rows } = await client.query<{ daily: string; charged: string }>(
        `SELECT (SELECT coalesce(sum(fees), 0)::text FROM ledger_daily_volume WHERE action = 'bundle') AS daily,
                (SELECT coalesce(sum(fee), 0)::text FROM ledger_transactions
                  WHERE action = 'bundle' AND fee <> 0 AND ledger_time IS NOT NULL) AS charged`,
      );
      assert.ok(BigInt(rows[0]?.charged ?? '0') > 7n, 'bundles with fees besides the odd one');
      assert.equal(
        rows[0]?.daily,
        rows[0]?.charged,
        "the daily volume's bundle fees are the fees the bundles paid",
      );
    } finally {
      await client.query('ROLLBACK').catch(() => undefined);
      await client.end();
    }
  });

  it('the account examples of docs/analytics.md find an EVM address in any case and an Arweave id exactly', async () => {
    const [balancesSql, movementsSql] = documentedAccountExamples();
    const accounts = truth.flatMap((r) => [r.from, r.to]);
    const arweave = accounts.find((a) => /^[\w-]{43}$/.test(a) && /[A-Z]/.test(a) && /[a-z]/.test(a));
    const evm = accounts.find((a) => /^0x[0-9a-fA-F]{40}$/.test(a) && /[A-F]/.test(a));
    assert.ok(arweave && evm, 'an Arweave id and a checksum EVM address');
    const client = new pg.Client({ connectionString: db.url });
    await client.connect();
    try {
      const cases: Array<[string, string]> = [
        [arweave, arweave],
        [evm, evm.toLowerCase()],
        [evm.toLowerCase(), evm.toLowerCase()],
      ];
      for (const [given, stored] of cases) {
        const found = await client.query<{ token_tag: string; balance_units: string }>(balancesSql, [given]);
        const view = await queryRows<{ token_tag: string; balance_units: string }>(
          db.database.db,
          sql`SELECT token_tag, balance_units::text AS balance_units FROM ledger_account_balances WHERE account = ${stored}`,
        );
        assert.ok(view.length > 0, `${stored} has balances`);
        const byTag = (rows: Array<{ token_tag: string; balance_units: unknown }>) =>
          Object.fromEntries(rows.map((r) => [r.token_tag, String(r.balance_units)]));
        assert.deepEqual(byTag(found.rows), byTag(view), `balances of ${given}`);
        const moves = await client.query<{ from_account: string; to_account: string }>(movementsSql, [given]);
        const mine = truth.filter((r) => accountKey(r.from) === stored || accountKey(r.to) === stored);
        assert.ok(moves.rows.length > 0 && mine.length > 0, `movements of ${given}`);
        for (const row of moves.rows)
          assert.ok([row.from_account, row.to_account].map(accountKey).includes(stored), JSON.stringify(row));
      }
      // An Arweave id in another case is another account.
      const swapped = [...arweave].map((c) => (c === c.toLowerCase() ? c.toUpperCase() : c.toLowerCase()));
      assert.equal((await client.query(balancesSql, [swapped.join('')])).rows.length, 0);
    } finally {
      await client.end();
    }
  });

  it('gives amounts in token units exactly, without trailing zeros', async () => {
    const rows = await queryRows<{ amount: string; amount_units: string; decimals: number }>(
      db.database.db,
      sql`SELECT amount::text AS amount, amount_units::text AS amount_units, decimals FROM ledger_movements
          WHERE decimals IS NOT NULL AND amount <> 0 ORDER BY decimals DESC, raw_id LIMIT 200`,
    );
    assert.ok(rows.length > 0 && rows[0]!.decimals >= 18, 'a token with 18 decimals is among them');
    for (const row of rows) {
      const digits = row.amount.padStart(row.decimals + 1, '0');
      const whole = digits.slice(0, digits.length - row.decimals);
      const fraction = digits.slice(digits.length - row.decimals).replace(/0+$/, '');
      assert.equal(row.amount_units, fraction === '' ? whole : `${whole}.${fraction}`);
    }
  });

  it('verify --balances compares the most active accounts with the service and names a difference', async () => {
    const clean = await run(['verify', '--balances', '15', '--json'], env);
    assert.equal(clean.code, 0, clean.out);
    const report = JSON.parse(clean.out) as {
      balances: { accounts: number; balances: number; differences: Array<Record<string, string>> };
    };
    assert.equal(report.balances.accounts, 15);
    assert.ok(report.balances.balances >= 15);
    assert.deepEqual(report.balances.differences, []);

    // One stored transfer says it moved 1 more than the service did: sender and receiver differ.
    const [row] = await queryRows<{ raw_id: string; to_account: string; token_tag: string }>(
      db.database.db,
      sql`SELECT raw_id::text AS raw_id, to_account, token_tag FROM ledger_transactions
          WHERE action = 'transfer' AND to_account <> from_account AND to_account <> fee_recipient
            AND from_account <> fee_recipient
          ORDER BY raw_id LIMIT 1`,
    );
    assert.ok(row);
    await db.database.db.execute(
      sql`UPDATE ledger_transactions SET amount = amount + 1 WHERE raw_id = ${Number(row.raw_id)}`,
    );
    const accounts = String(new Set(truth.flatMap((r) => [accountKey(r.from), accountKey(r.to)])).size);
    const { code, out } = await run(['verify', '--balances', accounts], env);
    assert.equal(code, 1);
    const receiver = accountKey(row.to_account);
    assert.match(
      out,
      /balances: \d+ account\(s\), \d+ token balance\(s\) compared with the service: 2 differ/,
    );
    const named = new RegExp(`  ${receiver} ${row.token_tag}: stored (\\d+), service (\\d+)`).exec(out);
    assert.ok(named, out);
    assert.equal(
      BigInt(named[1]!) - BigInt(named[2]!),
      1n,
      'the receiver is credited one unit more than the service says',
    );
    await db.database.db.execute(
      sql`UPDATE ledger_transactions SET amount = amount - 1 WHERE raw_id = ${Number(row.raw_id)}`,
    );
  });
});
