/** The read API's single-record look-ups: by ledger hash, and a mint by its source-chain hash. */
import { type SQL, sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../../rows.js';
import { textArray } from '../../text-array.js';
import { RECORD_SELECT, type RecordRow } from './record-rows.js';
import { COVERAGE_SELECT, type StreamCoverage, streamCoverage } from './stream-coverage.js';

/**
 * A look-up and the coverage of the streams that could answer it, in one statement: one round
 * trip and one snapshot (a look-up in a transaction of its own took five round trips).
 * `record` undefined: none stored.
 */
export async function selectOneWithCoverage(
  db: Executor,
  input: { by: 'ledgerHash' | 'mintChainHash'; hash: string; keys: readonly string[] },
): Promise<{ record: RecordRow | undefined; streams: StreamCoverage[] }> {
  const lookUp = input.by === 'ledgerHash' ? byLedgerHashSql(input.hash) : mintByChainHashSql(input.hash);
  const rows = await queryRows<Record<string, unknown>>(
    db,
    sql`SELECT rec.*, ${COVERAGE_SELECT}
        FROM (SELECT 1) AS one
        LEFT JOIN LATERAL (${lookUp}) AS rec ON true
        LEFT JOIN sync_streams s ON s.key = ANY (${textArray([...input.keys])}::text[])`,
  );
  const first = rows[0];
  const record = first === undefined || first['raw_id'] === null ? undefined : (first as RecordRow);
  return { record, streams: rows.filter((r) => r['key'] !== null).map(streamCoverage) };
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
