/**
 * A range write whose records are all new, by `COPY`: the rows and their bundle items copied in,
 * then their status history, re-read queue, rejected records, proof and lease by one statement,
 * all in one transaction committed asynchronously, as `buildRangeWrite`'s one statement does.
 * PostgreSQL takes copied rows for well under half the CPU of the same rows read out of a jsonb
 * parameter by an `INSERT … SELECT` (docs/performance.md). The unique indexes hold the
 * assumption: a record stored after all fails the copy with a unique violation, the transaction
 * ends with its connection (the pool discards a connection whose work failed), and the caller
 * writes the batch the full way.
 */
import { sql } from 'drizzle-orm';
import type { CopyConnection } from '../copy-connection.js';
import { queryRows } from '../rows.js';
import { BUNDLE_ITEM_COLUMNS, RECORD_COLUMNS } from '../schema/transaction-columns.js';
import { type CopyColumns, copyOptions, copyText } from './copy-text.js';
import type { BundleItemRow, TransactionRow } from './encode.js';
import { buildCopiedRangeRest, type CopiedRangeRestInput } from './range-write-sql.js';
import { matchedTags, type ServedRecord } from './record-write-sql.js';
import type { TransactionWriteResult } from './write-transactions.js';

type RecordName = keyof TransactionRow;
type ItemName = keyof BundleItemRow;
const RECORD_NAMES = RECORD_COLUMNS.map((c) => c.name);
const RECORD_COPY: CopyColumns = {
  names: [...RECORD_NAMES, 'first_seen_at', 'updated_at'],
  json: [...RECORD_COLUMNS.map((c) => c.sqlType === 'jsonb'), false, false],
};
const TAG_INDEX = RECORD_NAMES.indexOf('token_tag');
const ITEM_NAMES = BUNDLE_ITEM_COLUMNS.map((c) => c.name);
const ITEM_COPY: CopyColumns = {
  names: ITEM_NAMES,
  json: BUNDLE_ITEM_COLUMNS.map((c) => c.sqlType === 'jsonb'),
};
// Fixed identifiers only.
const copyInto = (table: string, columns: CopyColumns): string =>
  `COPY ${table} (${columns.names.join(', ')}) FROM STDIN ${copyOptions}`;
const RECORDS_IN = copyInto('ledger_transactions', RECORD_COPY);
const ITEMS_IN = copyInto('ledger_bundle_items', ITEM_COPY);

/** Input of {@link copyRangeWrite}: the records (one per rawId, none divergent) and the rest. */
export interface RangeCopyInput extends Omit<CopiedRangeRestInput, 'copied' | 'pending'> {
  records: readonly ServedRecord[];
}

/**
 * Writes a range's records, all taken to be new, and the rest of its write in one transaction
 * (see the module's comment), on a connection of `Database.withCopyConnection`, which discards
 * it when this fails. Throws the database's error, a unique violation among them, with nothing
 * written.
 */
export async function copyRangeWrite(
  connection: CopyConnection,
  input: RangeCopyInput,
): Promise<TransactionWriteResult> {
  const records = [...input.records].sort((a, b) => a.row.raw_id - b.row.raw_id);
  const now = input.now.toISOString();
  const { db } = connection;
  await db.execute(sql.raw('BEGIN; SET LOCAL synchronous_commit = off'));
  const tags = await storedTags(connection, records);
  const recordText = copyText(records, RECORD_COPY, (r, i) => {
    if (i === TAG_INDEX) return tags.get(r.row.token_tag) ?? r.row.token_tag;
    return i < RECORD_NAMES.length ? r.row[RECORD_NAMES[i] as RecordName] : now;
  });
  const inserted = await connection.copyIn(RECORDS_IN, recordText);
  const items = records.flatMap((r) => r.items);
  if (items.length > 0) {
    await connection.copyIn(
      ITEMS_IN,
      copyText(items, ITEM_COPY, (item, i) => item[ITEM_NAMES[i] as ItemName]),
    );
  }
  const pending = records.flatMap((r) =>
    r.pending === null ? [] : [{ rawId: r.row.raw_id, pending: r.pending }],
  );
  await db.execute(buildCopiedRangeRest({ ...input, copied: records.map((r) => r.row.raw_id), pending }));
  await db.execute(sql.raw('COMMIT'));
  return {
    fenced: true,
    inserted,
    updated: 0,
    unchanged: records.length - inserted,
    conflicts: 0,
    conflicted: [],
    clashes: [],
  };
}

/** The tag each distinct derived tag of `records` is stored with (`matchedTags`). */
async function storedTags(
  connection: CopyConnection,
  records: readonly ServedRecord[],
): Promise<Map<string, string>> {
  const derived = [...new Set(records.map((r) => r.row.token_tag))];
  const rows = await queryRows<{ derived: string; matched: string }>(connection.db, matchedTags(derived));
  return new Map(rows.map((r) => [r.derived, r.matched]));
}
