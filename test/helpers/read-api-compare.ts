/**
 * Comparing the mirror's read API with the service: the same random requests to both, their
 * answers compared as parsed JSON, and the values the requests are drawn from.
 */
import assert from 'node:assert/strict';
import { sql } from 'drizzle-orm';
import type { Database } from '../../src/db/connect.js';
import { queryRows } from '../../src/db/rows.js';
import { type QueryUniverse, randomQuery } from './read-api-queries.js';
import type { Rng } from './seed.js';

/** What an older record may lack: the mirror stores it empty and serves it so (see record-rows.ts). */
const EMPTY_EXPRESS = { chainTxHash: '', withdrawFee: '', refundLedgerHash: '', err: '' };

function withLegacyFields(record: Record<string, unknown>): Record<string, unknown> {
  return {
    ...record,
    version: record['version'] ?? '',
    targetChainTxHash: record['targetChainTxHash'] ?? '',
    express: record['express'] ?? EMPTY_EXPRESS,
  };
}

export const byKey = (key: string) => (a: Record<string, unknown>, b: Record<string, unknown>) =>
  String(a[key]).localeCompare(String(b[key]));

/**
 * An answer as compared: older records' absent fields as the mirror serves them, and lists of
 * tokens by tag (the mirror keeps tokens by tag, the service in its own order).
 */
function comparable(value: unknown): unknown {
  if (typeof value !== 'object' || value === null) return value;
  const answer = { ...(value as Record<string, unknown>) };
  const list = (key: string) => answer[key] as Array<Record<string, unknown>>;
  if (Array.isArray(answer['txs'])) answer['txs'] = list('txs').map(withLegacyFields);
  if (typeof answer['tx'] === 'object' && answer['tx'] !== null)
    answer['tx'] = withLegacyFields(answer['tx'] as Record<string, unknown>);
  if (Array.isArray(answer['fees'])) answer['fees'] = [...list('fees')].sort(byKey('tokenTag'));
  if (Array.isArray(answer['balances'])) answer['balances'] = [...list('balances')].sort(byKey('tag'));
  return answer;
}

/** A GET of `base` + `path`: its status and parsed JSON. */
export async function getJson(base: string, path: string): Promise<{ status: number; json: unknown }> {
  const response = await fetch(`${base}${path}`);
  const text = await response.text();
  return { status: response.status, json: JSON.parse(text) };
}

/** The values requests are drawn from: the mirror's accounts and hashes, the service's tags and head. */
export async function queryUniverse(input: {
  database: Database;
  serviceUrl: string;
  headRawId: number;
}): Promise<QueryUniverse> {
  const db = input.database.db;
  const accounts = await queryRows<{ a: string }>(
    db,
    sql`SELECT a FROM (SELECT from_account AS a FROM ledger_transactions
        UNION SELECT to_account FROM ledger_transactions) x ORDER BY a`,
  );
  const hashes = await queryRows<{ h: string }>(
    db,
    sql`SELECT ledger_hash AS h FROM ledger_transactions ORDER BY raw_id`,
  );
  // A mint whose record lacks `targetChainTxHash` cannot be found by it in the mirror.
  const mints = await queryRows<{ h: string }>(
    db,
    sql`SELECT target_chain_tx_hash AS h FROM ledger_transactions
        WHERE action = 'mint' AND target_chain_tx_hash <> '' ORDER BY raw_id`,
  );
  const info = (await getJson(input.serviceUrl, '/info')).json as { tokenList: Array<{ tag: string }> };
  return {
    accounts: accounts.map((r) => r.a),
    tags: info.tokenList.map((t) => t.tag),
    ledgerHashes: hashes.map((r) => r.h),
    mintHashes: mints.map((r) => r.h),
    headRawId: input.headRawId,
  };
}

/** How many answers of each kind a comparison saw. */
export interface Seen {
  ok: number;
  errors: number;
  key: number;
  page: number;
  withRecords: number;
  balances: number;
}

function tally(seen: Seen, answer: { status: number; json: unknown }): void {
  if (answer.status === 200) seen.ok++;
  else seen.errors++;
  const body = answer.json as { txs?: unknown[]; tx?: unknown; balances?: unknown; balance?: unknown };
  if ('hasNextPage' in body) seen.key++;
  if ('currentPage' in body) seen.page++;
  if ((body.txs?.length ?? 0) > 0 || body.tx !== undefined) seen.withRecords++;
  if (body.balances !== undefined || body.balance !== undefined) seen.balances++;
}

/**
 * Sends `count` random requests to both, and asserts their answers are equal (status and parsed
 * JSON); returns what it saw. Stops at the fifth difference, listing them all.
 */
export async function compareAnswers(input: {
  rng: Rng;
  universe: QueryUniverse;
  serviceUrl: string;
  mirrorUrl: string;
  count: number;
}): Promise<Seen> {
  const differences: string[] = [];
  const seen: Seen = { ok: 0, errors: 0, key: 0, page: 0, withRecords: 0, balances: 0 };
  for (let i = 0; i < input.count && differences.length < 5; i++) {
    const path = randomQuery(input.rng, input.universe);
    const [service, mirror] = await Promise.all([
      getJson(input.serviceUrl, path),
      getJson(input.mirrorUrl, path),
    ]);
    tally(seen, service);
    try {
      assert.equal(mirror.status, service.status);
      assert.deepEqual(comparable(mirror.json), comparable(service.json));
    } catch (error) {
      differences.push(`${path}: ${(error as Error).message.slice(0, 600)}`);
    }
  }
  assert.deepEqual(differences, []);
  return seen;
}
