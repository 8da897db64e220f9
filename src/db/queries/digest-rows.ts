/**
 * The mirror's side of a digest: the stored records of `ledger_transactions` read in rawId order,
 * a page of rows at a time (keyset pagination), and fed to the digest core.
 */
import { sql } from 'drizzle-orm';
import type { DigestRecord } from '../../digest/canonical-line.js';
import { createDigestBuilder, type DigestQuery, type MirrorDigest } from '../../digest/range-digest.js';

import type { Db } from '../drizzle-db.js';
import { type Executor, queryRows } from '../rows.js';

/** Rows read by one query. */
const PAGE_ROWS = 5000;

/** A row as the digest reads it: numerics and bigints as text, so no value passes through a JS number inexactly. */
interface DigestRow {
  raw_id: string;
  record_id: string;
  token_symbol: string;
  action: string;
  from_account: string;
  to_account: string;
  amount: string;
  fee: string;
  fee_recipient: string;
  nonce: string;
  token_id: string;
  chain_type: string;
  chain_id: string;
  data: string;
  version: string;
  sig: string;
  ledger_hash: string;
  status: string;
  internal_status: string;
  timestamp_ms: string;
  target_chain_tx_hash: string;
  express_chain_tx_hash: string;
  express_withdraw_fee: string;
  express_refund_ledger_hash: string;
  express_err: string;
}

/**
 * The stored records with `from ≤ rawId ≤ to`, in rawId order, `pageRows` rows a query: the
 * memory held is one page, whatever the table's size.
 */
export async function* readDigestRecords(
  executor: Executor,
  bounds: { from?: number | undefined; to?: number | null | undefined },
  options: { pageRows?: number | undefined; signal?: AbortSignal | undefined } = {},
): AsyncGenerator<DigestRecord> {
  const pageRows = options.pageRows ?? PAGE_ROWS;
  let after = (bounds.from ?? 0) - 1;
  const upTo = bounds.to ?? Number.MAX_SAFE_INTEGER;
  for (;;) {
    options.signal?.throwIfAborted();
    // Ordered by the table's column: the text alias `raw_id` would sort 1009 before 101.
    const rows = await queryRows<DigestRow>(
      executor,
      sql`select raw_id::text as raw_id, record_id, token_symbol, action, from_account, to_account,
            amount::text as amount, fee::text as fee, fee_recipient, nonce::text as nonce, token_id,
            chain_type, chain_id, data, version, sig, ledger_hash, status, internal_status,
            timestamp_ms::text as timestamp_ms, target_chain_tx_hash, express_chain_tx_hash,
            express_withdraw_fee, express_refund_ledger_hash, express_err
          from ledger_transactions t
          where t.raw_id > ${after} and t.raw_id <= ${upTo}
          order by t.raw_id
          limit ${pageRows}`,
    );
    for (const row of rows) yield digestRecordOf(row);
    const last = rows.at(-1);
    if (last === undefined || rows.length < pageRows) return;
    after = Number(last.raw_id);
  }
}

/**
 * The digest of the stored records `query` covers, read in one read-only snapshot so that a sync
 * writing meanwhile cannot show half of its pages. `lines` keeps each range's canonical lines
 * (for small ranges).
 */
export async function digestStoredRecords(
  db: Db,
  query: DigestQuery,
  options: {
    lines?: boolean | undefined;
    pageRows?: number | undefined;
    signal?: AbortSignal | undefined;
  } = {},
): Promise<MirrorDigest> {
  const builder = createDigestBuilder(query, { keepLines: options.lines === true });
  await db.transaction(
    async (tx) => {
      for await (const record of readDigestRecords(tx, query, options)) builder.add(record);
    },
    { isolationLevel: 'repeatable read', accessMode: 'read only' },
  );
  return builder.finish();
}

function digestRecordOf(row: DigestRow): DigestRecord {
  return {
    rawId: Number(row.raw_id),
    tokenSymbol: row.token_symbol,
    action: row.action,
    from: row.from_account,
    to: row.to_account,
    amount: row.amount,
    fee: row.fee,
    feeRecipient: row.fee_recipient,
    nonce: row.nonce,
    tokenID: row.token_id,
    chainType: row.chain_type,
    chainID: row.chain_id,
    data: row.data,
    version: row.version,
    sig: row.sig,
    ledgerHash: row.ledger_hash,
    status: row.status,
    id: row.record_id,
    timestamp: Number(row.timestamp_ms),
    internalStatus: row.internal_status,
    targetChainTxHash: row.target_chain_tx_hash,
    express: {
      chainTxHash: row.express_chain_tx_hash,
      withdrawFee: row.express_withdraw_fee,
      refundLedgerHash: row.express_refund_ledger_hash,
      err: row.express_err,
    },
  };
}
