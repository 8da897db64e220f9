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
import {
  type CopyEncoding,
  copyEncoding,
  ITEM_COPY,
  itemLines,
  RECORD_LINE_COLUMNS,
  recordLines,
} from './copy-encoding.js';
import { type CopyColumns, copyOptions } from './copy-text.js';
import { buildCopiedRangeRest, type CopiedRangeRestInput } from './range-write-sql.js';
import { matchedTags, type ServedRecord } from './record-write-sql.js';
import type { TransactionWriteResult } from './write-transactions.js';

// Fixed identifiers only.
const copyInto = (table: string, columns: Pick<CopyColumns, 'names'>): string =>
  `COPY ${table} (${columns.names.join(', ')}) FROM STDIN ${copyOptions}`;
const RECORDS_IN = copyInto('ledger_transactions', { names: RECORD_LINE_COLUMNS });
const ITEMS_IN = copyInto('ledger_bundle_items', ITEM_COPY);

/** Input of {@link copyRangeWrite}: the records (one per rawId, none divergent) and the rest. */
export interface RangeCopyInput extends Omit<CopiedRangeRestInput, 'pending'> {
  records: readonly ServedRecord[];
}

/** Input of {@link copyEncodedRangeWrite}: the records encoded for the copy, and the rest. */
export interface EncodedRangeCopyInput extends Omit<CopiedRangeRestInput, 'pending'> {
  /** Together {@link copyable}: rawIds ascending, each once, no hash twice. */
  encodings: readonly CopyEncoding[];
}

/**
 * Writes a range's records, all taken to be new, and the rest of its write in one transaction
 * (see the module's comment), on a connection of `Database.withCopyConnection`, which discards
 * it when this fails. Throws the database's error, a unique violation among them, with nothing
 * written.
 */
export function copyRangeWrite(
  connection: CopyConnection,
  input: RangeCopyInput,
): Promise<TransactionWriteResult> {
  const { records, ...rest } = input;
  const sorted = [...records].sort((a, b) => a.row.raw_id - b.row.raw_id);
  return copyEncodedRangeWrite(connection, { ...rest, encodings: [copyEncoding(sorted)] });
}

/** {@link copyRangeWrite} of records encoded beforehand (`copy-encoding.ts`). */
export async function copyEncodedRangeWrite(
  connection: CopyConnection,
  input: EncodedRangeCopyInput,
): Promise<TransactionWriteResult> {
  const { encodings, ...rest } = input;
  const now = input.now.toISOString();
  const { db } = connection;
  await db.execute(sql.raw('BEGIN; SET LOCAL synchronous_commit = off'));
  const tags = await storedTags(connection, encodings);
  const inserted = await connection.copyIn(
    RECORDS_IN,
    recordLines(encodings, (tag) => tags.get(tag) ?? tag, now),
  );
  const items = itemLines(encodings);
  if (items.length > 0) await connection.copyIn(ITEMS_IN, items);
  const copied = encodings.flatMap((e) => e.rawIds);
  const pending = encodings.flatMap((e) =>
    e.rawIds.flatMap((rawId, i) => {
      const reason = e.pending[i];
      return reason === null || reason === undefined ? [] : [{ rawId, pending: reason }];
    }),
  );
  await db.execute(buildCopiedRangeRest({ ...rest, pending }));
  await db.execute(sql.raw('COMMIT'));
  return {
    fenced: true,
    inserted,
    updated: 0,
    unchanged: copied.length - inserted,
    conflicts: 0,
    conflicted: [],
    clashes: [],
  };
}

/** The tag each distinct encoded tag of `encodings` is stored with (`matchedTags`). */
async function storedTags(
  connection: CopyConnection,
  encodings: readonly CopyEncoding[],
): Promise<Map<string, string>> {
  const derived = [...new Set(encodings.flatMap((e) => e.tags))];
  const rows = await queryRows<{ derived: string; matched: string }>(connection.db, matchedTags(derived));
  return new Map(rows.map((r) => [r.derived, r.matched]));
}
