/**
 * A range's records encoded for its COPY as far as the records alone allow: each record's line up
 * to its token tag, its bundle items' lines, and what the commit needs besides (rawIds, hashes,
 * tags, why a record waits for a re-read, failed checks). The commit adds to each line what only
 * it knows: the tag as stored (`matchedTags`) and its own time. So the encoding can be made before
 * the commit, and elsewhere (`copy-encoder.ts`: another thread). Pure.
 */
import type { LedgerTx } from '../../domain/model.js';
import { InvalidRecordError } from '../../errors.js';
import { BUNDLE_ITEM_COLUMNS, RECORD_COLUMNS } from '../schema/transaction-columns.js';
import { type CopyColumns, copyText, copyValue } from './copy-text.js';
import {
  type BundleItemRow,
  type EncodedTransaction,
  type EncodeOptions,
  encodeTransaction,
  type PendingReason,
  type TransactionRow,
} from './encode.js';
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

/** The options an encoding made elsewhere is made with: plain values only (they are copied there). */
export type CopyEncodeOptions = Omit<EncodeOptions, 'knownTags'>;

/** The rawIds of an answer a range walk keeps: above `after` (all when `null`) and up to `upTo`. */
export interface AnswerWindow {
  after: number | null;
  upTo: number;
  /**
   * `false`: read the answer but encode nothing. A repair's records are stored already, so its
   * commits take the full way and an encoding would be made, held and thrown away.
   */
  encode?: boolean | undefined;
}

/** Whether `rawId` is in `window`: above `after` (any when `null`), up to `upTo`. */
export function inWindow(rawId: number, window: AnswerWindow): boolean {
  return (window.after === null || rawId > window.after) && rawId <= window.upTo;
}

/** An answer by key parsed and encoded elsewhere (`CopyEncoder.read`). */
export interface AnswerRead {
  hasNextPage: boolean;
  /** Every record the answer served, in order, and their timestamps. */
  rawIds: number[];
  timestamps: number[];
  /** How many records the parse set aside. */
  rejected: number;
  /** The encoding of the records in the window, in order; `null` when one cannot be encoded, or none was asked. */
  encoding: CopyEncoding | null;
}

/** Encodings made elsewhere (another thread), by the array of records they were asked for. */
export interface CopyEncoder {
  /**
   * Parses an answer's text elsewhere and encodes its records in `window`: what a walk needs of
   * the answer, without parsing it itself. `null` when the text is not a key answer, or no thread
   * runs, or none is ready yet: reads coming fast enough start them, and the walk reads its answers
   * itself meanwhile rather than wait for them.
   */
  read(text: string, window: AnswerWindow, options: CopyEncodeOptions): Promise<AnswerRead | null>;
  /** Starts the threads if they are not; resolves once one is ready to read (`false`: none will be). */
  ready(): Promise<boolean>;
  /** Whether the threads were started (by {@link CopyEncoder.ready}, or reads coming fast enough). */
  readonly started: boolean;
  /** Ends the work; encodings still awaited resolve to null. */
  close(): Promise<void>;
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
 * Encodes `records` for a COPY; `null` when one cannot be encoded (the commit then takes the
 * full way, which sets it aside with the reason).
 */
export function encodeForCopy(records: readonly LedgerTx[], options: CopyEncodeOptions): CopyEncoding | null {
  const encoded: EncodedTransaction[] = [];
  for (const tx of records) {
    try {
      encoded.push(encodeTransaction(tx, options));
    } catch (error) {
      if (error instanceof InvalidRecordError) return null;
      throw error;
    }
  }
  return copyEncoding(encoded);
}

/**
 * Whether encodings can be copied in as one commit: rawIds strictly ascending throughout (one
 * sighting each, as a walk by key reads them) and no ledger hash twice. Anything else takes the
 * full way, which keeps one version of each and sets clashes aside.
 */
export function copyable(encodings: readonly CopyEncoding[]): boolean {
  let last = Number.NEGATIVE_INFINITY;
  const hashes = new Set<string>();
  for (const encoding of encodings) {
    for (const rawId of encoding.rawIds) {
      if (!(rawId > last)) return false;
      last = rawId;
    }
    for (const hash of encoding.ledgerHashes) {
      if (hashes.has(hash)) return false;
      hashes.add(hash);
    }
  }
  return true;
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
