/**
 * A range's records encoded for its COPY as far as the records alone allow: each record's line up
 * to its token tag, its bundle items' lines, and what the commit needs besides (rawIds, hashes,
 * tags, why a record waits for a re-read, failed checks). The commit adds to each line what only
 * it knows: the tag as stored (`matchedTags`) and its own time. Pure.
 */
import { BUNDLE_ITEM_COLUMNS, RECORD_COLUMNS } from '../schema/transaction-columns.js';
import { type CopyColumns, copyText, copyValue } from './copy-text.js';
import type { BundleItemRow, EncodedTransaction, PendingReason, TransactionRow } from './encode.js';
import { integrityMismatches } from './integrity-log.js';

type RecordName = keyof TransactionRow;
type ItemName = keyof BundleItemRow;

/** A record's columns but its token tag, in the table's order: each line's first part. */
const LINE_NAMES = RECORD_COLUMNS.map((c) => c.name).filter((name) => name !== 'token_tag');
const LINE_COPY: CopyColumns = {
  names: LINE_NAMES,
  json: RECORD_COLUMNS.filter((c) => c.name !== 'token_tag').map((c) => c.sqlType === 'jsonb'),
};
/** The columns of a record's whole COPY line: its first part, then what the commit adds. */
export const RECORD_LINE_COLUMNS: readonly string[] = [
  ...LINE_NAMES,
  'token_tag',
  'first_seen_at',
  'updated_at',
];

const ITEM_NAMES = BUNDLE_ITEM_COLUMNS.map((c) => c.name);
/** The columns of a bundle item's COPY line. */
export const ITEM_COPY: CopyColumns = {
  names: ITEM_NAMES,
  json: BUNDLE_ITEM_COLUMNS.map((c) => c.sqlType === 'jsonb'),
};

/** Records encoded for a COPY, in the order given. */
export interface CopyEncoding {
  rawIds: number[];
  ledgerHashes: string[];
  /** Each record's token tag as encoded: the commit stores the tag it matches. */
  tags: string[];
  pending: PendingReason[];
  /** The rawIds whose hash, or signature, is not what the sender signed. */
  mismatches: { hash: number[]; signature: number[] };
  /** One line a record, newline-ended, each holding the columns before its token tag. */
  lines: Uint8Array;
  /** The bundle items' whole lines. */
  items: Uint8Array;
}

/** The encoding of records already encoded into rows. */
export function copyEncoding(records: readonly EncodedTransaction[]): CopyEncoding {
  const items = records.flatMap((r) => r.items);
  return {
    rawIds: records.map((r) => r.row.raw_id),
    ledgerHashes: records.map((r) => r.row.ledger_hash),
    tags: records.map((r) => r.row.token_tag),
    pending: records.map((r) => r.pending),
    mismatches: integrityMismatches(records),
    lines: copyText(records, LINE_COPY, (r, i) => r.row[LINE_NAMES[i] as RecordName]),
    items: copyText(items, ITEM_COPY, (item, i) => item[ITEM_NAMES[i] as ItemName]),
  };
}

/**
 * The records' whole COPY lines ({@link RECORD_LINE_COLUMNS}): each line's first part, then the
 * tag `storedTag` gives for its encoded one, and `now` as first seen and updated.
 */
export function recordLines(
  encodings: readonly CopyEncoding[],
  storedTag: (tag: string) => string,
  now: string,
): Buffer {
  const ends = new Map<string, Buffer>();
  const endOf = (tag: string): Buffer => {
    let end = ends.get(tag);
    if (end === undefined) {
      end = Buffer.from(`\t${copyValue(storedTag(tag))}\t${now}\t${now}\n`, 'utf8');
      ends.set(tag, end);
    }
    return end;
  };
  let size = 0;
  for (const encoding of encodings) {
    size += encoding.lines.byteLength - encoding.rawIds.length;
    for (const tag of encoding.tags) size += endOf(tag).length;
  }
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (const encoding of encodings) {
    const lines = Buffer.from(encoding.lines.buffer, encoding.lines.byteOffset, encoding.lines.byteLength);
    let start = 0;
    for (const tag of encoding.tags) {
      const newline = lines.indexOf(0x0a, start);
      at += lines.copy(out, at, start, newline);
      at += endOf(tag).copy(out, at);
      start = newline + 1;
    }
  }
  return out;
}

/** The bundle items' lines of all the encodings, in order. */
export function itemLines(encodings: readonly CopyEncoding[]): Buffer {
  return Buffer.concat(encodings.map((e) => e.items));
}
