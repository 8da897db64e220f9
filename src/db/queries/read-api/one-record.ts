/** The read API's single-record look-ups: by ledger hash, and a mint by its source-chain hash. */
import { type SQL, sql } from 'drizzle-orm';
import { type Executor, queryRowsPrepared } from '../../rows.js';
import { textArray } from '../../text-array.js';
import { RECORD_SELECT, type RecordRow } from './record-rows.js';

/** What a look-up matches: a record's `ledgerHash`, or a mint's source-chain hash. */
export type LookUpBy = 'ledgerHash' | 'mintChainHash';

/**
 * Look-ups of one kind, one record or none for each hash in order, in one named prepared
 * statement (parsed once per connection: the record's twenty-five columns are most of its text,
 * and its text is the same however many hashes it asks).
 */
export async function selectLookUps(
  db: Executor,
  by: LookUpBy,
  hashes: readonly string[],
): Promise<Array<RecordRow | undefined>> {
  const found: Array<RecordRow | undefined> = hashes.map(() => undefined);
  // PostgreSQL text holds no NUL: such a hash names no stored record, and sent with the others it
  // would fail the statement for every look-up gathered with it.
  const asked = [...hashes.keys()].filter((i) => !hashes[i]!.includes('\u0000'));
  if (asked.length === 0) return found;
  const sent = asked.map((i) => hashes[i]!);
  const rows = await queryRowsPrepared<RecordRow & { look_up: number }>(db, lookUpsSql(by, sent));
  for (const { look_up, ...record } of rows) found[asked[look_up - 1]!] = record;
  return found;
}

/**
 * For each hash (`look_up`, its place from 1) the record it names, where one is stored: by
 * `ledgerHash`, as given or in lower case (the service matches any case of a hex hash); a mint by
 * its source-chain hash (`targetChainTxHash`), a `0x` hash in any case, another exactly. The
 * lowest rawId where two match. Each hash is one index probe (`LATERAL … LIMIT 1`).
 */
export function lookUpsSql(by: LookUpBy, hashes: readonly string[]): SQL {
  if (by === 'ledgerHash') {
    return sql`SELECT w.i::int AS look_up, r.* FROM
        unnest(${textArray(hashes)}::text[], ${textArray(hashes.map((h) => h.toLowerCase()))}::text[])
          WITH ORDINALITY AS w(hash, lowered, i)
        CROSS JOIN LATERAL (SELECT ${RECORD_SELECT} FROM ledger_transactions t
          WHERE t.ledger_hash IN (w.hash, w.lowered) ORDER BY t.raw_id LIMIT 1) r`;
  }
  const wanted = hashes.map((h) => (h.startsWith('0x') ? h.toLowerCase() : h));
  return sql`SELECT w.i::int AS look_up, r.* FROM unnest(${textArray(wanted)}::text[]) WITH ORDINALITY AS w(hash, i)
      CROSS JOIN LATERAL (SELECT ${RECORD_SELECT} FROM ledger_transactions t
        WHERE t.action = 'mint' AND t.target_chain_tx_hash = w.hash ORDER BY t.raw_id LIMIT 1) r`;
}
