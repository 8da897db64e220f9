/** The read API's single-record look-ups: by ledger hash, and a mint by its source-chain hash. */
import { type SQL, sql } from 'drizzle-orm';
import { type Executor, queryRowsPrepared } from '../../rows.js';
import { RECORD_SELECT, type RecordRow } from './record-rows.js';

/**
 * A look-up, as a named prepared statement (parsed once per connection: the record's twenty-five
 * columns are most of its text). Undefined: none stored.
 */
export async function selectOne(
  db: Executor,
  input: { by: 'ledgerHash' | 'mintChainHash'; hash: string },
): Promise<RecordRow | undefined> {
  const lookUp = input.by === 'ledgerHash' ? byLedgerHashSql(input.hash) : mintByChainHashSql(input.hash);
  const [record] = await queryRowsPrepared<RecordRow>(db, lookUp);
  return record;
}

/** The record with this `ledgerHash`, as given or in lower case (the service matches any case of a hex hash). */
export function byLedgerHashSql(hash: string): SQL {
  return sql`SELECT ${RECORD_SELECT} FROM ledger_transactions t
      WHERE t.ledger_hash IN (${hash}, ${hash.toLowerCase()}) ORDER BY t.raw_id LIMIT 1`;
}

/** The mint whose source-chain hash (`targetChainTxHash`) is this: a `0x` hash in any case, another exactly. */
export function mintByChainHashSql(hash: string): SQL {
  const wanted = hash.startsWith('0x') ? hash.toLowerCase() : hash;
  return sql`SELECT ${RECORD_SELECT} FROM ledger_transactions t
      WHERE t.action = 'mint' AND t.target_chain_tx_hash = ${wanted} ORDER BY t.raw_id LIMIT 1`;
}
