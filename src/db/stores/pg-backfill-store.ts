import { type HeldRecords, isHeld } from '../../domain/commit-pages.js';
import { backfillOwner } from '../../domain/lease-owner.js';
import type { KeyAnswerText, LedgerTx, RejectedRecord } from '../../domain/model.js';
import { DatabaseError } from '../../errors.js';
import type { Logger } from '../../logger.js';
import type { BackfillStore, RangePage } from '../../sync/ports/backfill-store.js';
import type { Database } from '../connect.js';
import { nameOperations } from '../database-errors.js';
import {
  anyStoredBetween,
  countStoredAbove,
  selectBackfillRun,
  selectProvenRanges,
  selectRunningBackfill,
  selectStreamStarted,
} from '../queries/backfill-proofs.js';
import { UNIQUE_VIOLATION } from '../sqlstate.js';
import { type CopyEncoder, type CopyEncoding, copyable, inWindow } from '../write/copy-encoding.js';
import { warnIntegrityMismatches, warnMismatches } from '../write/integrity-log.js';
import { type PreparedBatch, prepareBatch } from '../write/prepare-batch.js';
import { copyEncodedRangeWrite, copyRangeWrite } from '../write/range-copy.js';
import { buildRangeWrite, type RangeWriteInput } from '../write/range-write-sql.js';
import { type RejectedRow, toPagedRejectedRows } from '../write/rejected-rows.js';
import { DEFAULT_REREAD_POLICY, type RereadPolicy } from '../write/reread-queue.js';
import { withRetries } from '../write/write-retries.js';
import { type TransactionWriteResult, writeTransactions } from '../write/write-transactions.js';
import { compactProvenRanges, insertBackfillRun, updateBackfillCheck } from './backfill-runs.js';

/**
 * The parallel backfill's store on PostgreSQL/PGlite. A range's pages go through the same
 * encoding and upsert as a stream walk's, several pages in one transaction with the ranges they
 * prove, so a proof never exists without its records.
 */
export function createBackfillStore(options: {
  database: Database;
  now?: () => Date;
  /** Recover each EVM sender's signature as records are written. Default false. */
  checkSignatures?: boolean;
  /** When the records a range stores are first re-read: the mirror's policy, as its walks use. */
  reread?: Partial<RereadPolicy> | undefined;
  logger?: Logger | undefined;
  /**
   * Encodes walks by key for their COPY off the main thread (PostgreSQL only; closed by its
   * owner). Default: encoded on the main thread.
   */
  copyEncoder?: CopyEncoder | undefined;
}): BackfillStore {
  const { database } = options;
  const now = options.now ?? (() => new Date());
  const policy: RereadPolicy = { ...DEFAULT_REREAD_POLICY, ...options.reread };
  const encodeOptions = () => ({
    now: now(),
    burnWindowMs: policy.burnWindowMs,
    checkSignatures: options.checkSignatures === true,
  });
  // Encodings made elsewhere are copied in: PostgreSQL only.
  const copyEncoder = database.withCopyConnection ? options.copyEncoder : undefined;
  const commitRangePages = createRangeCommits({
    database,
    policy,
    now,
    checkSignatures: options.checkSignatures === true,
    copyEncoder,
    logger: options.logger,
  });
  const store: BackfillStore = {
    startRun: (run) =>
      insertBackfillRun(database.db, {
        ...run,
        floor: run.floor ?? null,
        gapFloor: run.gapFloor ?? null,
        now: now(),
      }),
    getRun: (id) => selectBackfillRun(database.db, id),
    runningRun: (key) => selectRunningBackfill(database.db, key),
    streamStarted: (key) => selectStreamStarted(database.db, key),
    commitRangePages,
    async readAhead(answer, window) {
      if (!copyEncoder) return null;
      const asked = { after: window.after, upTo: window.upTo, encode: window.stored !== true };
      const read = await copyEncoder.read(answer.text, asked, encodeOptions());
      if (read === null || read.rejected > 0 || (asked.encode && read.encoding === null)) return null;
      const reading: HeldAnswer = { encoding: read.encoding, answer };
      const rawIds = read.encoding?.rawIds ?? read.rawIds.filter((rawId) => inWindow(rawId, asked));
      const records: HeldRecords = { held: true, rawIds, reading };
      return { hasNextPage: read.hasNextPage, rawIds: read.rawIds, timestamps: read.timestamps, records };
    },
    provenRanges: (key, backfillId) => selectProvenRanges(database.db, key, backfillId),
    compactProvenRanges: (key) => database.db.transaction((tx) => compactProvenRanges(tx, key, now())),
    storedAbove: (rawId) => countStoredAbove(database.db, rawId),
    recordCheck: (input) => updateBackfillCheck(database.db, { ...input, now: now() }),
  };
  // The names its failures report (`DatabaseError.operation`).
  return nameOperations(store, {
    startRun: 'backfill-start',
    getRun: 'backfill-select',
    runningRun: 'backfill-select',
    streamStarted: 'backfill-select',
    commitRangePages: 'range-write',
    provenRanges: 'proof-select',
    storedAbove: 'proof-select',
    compactProvenRanges: 'proof-compact',
    recordCheck: 'backfill-check-write',
  });
}

/**
 * What this store keeps of an answer it read ahead (`HeldRecords.reading`): the answer, and its
 * encoding (`null`: none was made, the records being stored already).
 */
interface HeldAnswer {
  encoding: CopyEncoding | null;
  answer: KeyAnswerText;
}

/** The reading of records this store read ahead; throws for records another store read. */
function heldAnswer(records: HeldRecords): HeldAnswer {
  const reading = records.reading as Partial<HeldAnswer> | null | undefined;
  if (reading?.answer === undefined) throw new Error('records read ahead by another store');
  return reading as HeldAnswer;
}

/**
 * A range's commit: its records copied in from the encodings the thread made of its answers when
 * every page has one and they can be (`copyable`), else encoded here and written the full way;
 * with the rest of the range's write in the same transaction.
 */
function createRangeCommits(deps: {
  database: Database;
  policy: RereadPolicy;
  now: () => Date;
  checkSignatures: boolean;
  copyEncoder: CopyEncoder | undefined;
  logger: Logger | undefined;
}): BackfillStore['commitRangePages'] {
  const { database, policy, now, copyEncoder } = deps;
  return async (input) => {
    const encoded = copyEncoder ? heldEncodings(input.pages) : null;
    const at = now();
    // Encoded on the main thread only when the commit takes the full way.
    let prepared: PreparedBatch | undefined;
    const prepare = (): PreparedBatch => {
      if (prepared !== undefined) return prepared;
      const records = input.pages.map((page) => heldOrParsed(page.records));
      prepared = prepareBatch(records.flat(), {
        now: at,
        burnWindowMs: policy.burnWindowMs,
        pages: input.pages.flatMap((page, i) => records[i]!.map(() => page.page)),
        checkSignatures: deps.checkSignatures,
      });
      return prepared;
    };
    const copies = encoded !== null && copyable(encoded) ? encoded : null;
    // Records, rejected records, proof and lease in one transaction, committed asynchronously,
    // since losing the last commits in a crash only leaves a gap for the check to repair.
    const rest = (refused: readonly RejectedRecord[]) => ({
      now: at,
      policy,
      range: {
        streamKey: input.key,
        backfillId: input.backfillId,
        owner: backfillOwner(input.backfillId),
        rejected: rejectedWithPages(input.pages, refused),
        proven: input.proven,
        openGap: lowestOpenGap(input.pages),
      },
    });
    const write = (assumeNew: boolean): Promise<TransactionWriteResult> => {
      if (assumeNew && copies !== null) return copyEncoded(database, { ...rest([]), encodings: copies });
      const batch = prepare();
      return writeRange(database, { ...rest(batch.rejected), prepared: batch, assumeNew });
    };
    const span = rawIdSpan(input.pages);
    const written = await withRetries('range-write', () => writeProbed(database, span, write), deps.logger);
    const context = { stream: input.key, pages: `${input.pages[0]?.page}-${input.pages.at(-1)?.page}` };
    if (prepared === undefined) warnMismatches(deps.logger, context, mergedMismatches(copies ?? []));
    else warnIntegrityMismatches(deps.logger, context, prepared.records);
    const early =
      input.pages.reduce((n, page) => n + page.rejected.length, 0) + (prepared?.rejected.length ?? 0);
    return {
      inserted: written.inserted,
      updated: written.updated,
      unchanged: written.unchanged,
      rejected: early + written.clashes.length,
      conflicts: written.conflicts,
    };
  };
}

/** The encodings of a commit's pages, held with their answers; `null` when a page has none (parsed by the walk, or stored already). */
function heldEncodings(pages: readonly RangePage[]): CopyEncoding[] | null {
  const encodings: CopyEncoding[] = [];
  for (const page of pages) {
    const encoding = isHeld(page.records) ? heldAnswer(page.records).encoding : null;
    if (encoding === null) return null;
    encodings.push(encoding);
  }
  return encodings;
}

/**
 * A page's records as objects: parsed by the walk, or, held with their answer, parsed here from
 * it (a commit that takes the full way: records stored already, or a hash twice).
 */
function heldOrParsed(records: LedgerTx[] | HeldRecords): LedgerTx[] {
  if (!isHeld(records)) return records;
  const { answer } = heldAnswer(records);
  const wanted = new Set(records.rawIds);
  const found = answer.parse().txs.filter((tx) => wanted.has(tx.rawId));
  if (found.length !== wanted.size) throw new Error('an answer read ahead no longer holds its records');
  return found;
}

/**
 * A range's one write: records taken to be new (`assumeNew`) are copied in where the database can
 * (PostgreSQL), unless sightings disagree (conflicts are the statement's to record); otherwise,
 * and on PGlite, one statement writes it all.
 */
function writeRange(
  database: Database,
  input: Omit<RangeWriteInput, 'records' | 'divergent'> & { prepared: PreparedBatch },
): Promise<TransactionWriteResult> {
  const { prepared, ...rest } = input;
  const { withCopyConnection } = database;
  if (input.assumeNew === true && prepared.divergent.length === 0 && withCopyConnection) {
    return withCopyConnection((connection) =>
      copyRangeWrite(connection, { ...rest, records: prepared.records }),
    );
  }
  return writeTransactions(database.db, {
    records: prepared.records,
    // Parsed once per connection, not per commit (connections plan it afresh each time).
    prepared: true,
    statement: buildRangeWrite({ ...rest, records: prepared.records, divergent: prepared.divergent }),
  });
}

/** A range's records encoded beforehand, copied in on a connection that can (PostgreSQL's). */
function copyEncoded(
  database: Database,
  input: Parameters<typeof copyEncodedRangeWrite>[1],
): Promise<TransactionWriteResult> {
  const { withCopyConnection } = database;
  if (!withCopyConnection) throw new Error('copied range write on a database without COPY');
  return withCopyConnection((connection) => copyEncodedRangeWrite(connection, input));
}

/** The rawIds of a page's records. */
function rawIdsOf(records: LedgerTx[] | HeldRecords): readonly number[] {
  return isHeld(records) ? records.rawIds : records.map((tx) => tx.rawId);
}

/** The failed checks of several encodings. */
function mergedMismatches(encodings: readonly CopyEncoding[]): { hash: number[]; signature: number[] } {
  return {
    hash: encodings.flatMap((e) => e.mismatches.hash),
    signature: encodings.flatMap((e) => e.mismatches.signature),
  };
}

/**
 * The records a range's pages set aside, each with the page that served it: those rejected while
 * reading a page with it, those refused while encoding with the page of their rawId (the last
 * page when they have none), grouped as stored.
 */
function rejectedWithPages(pages: readonly RangePage[], refused: readonly RejectedRecord[]): RejectedRow[] {
  // Built only for the rare commit that refused a record, not for every commit's records.
  const pageOf = new Map<number, number>();
  if (refused.length > 0)
    for (const page of pages) for (const rawId of rawIdsOf(page.records)) pageOf.set(rawId, page.page);
  const lastPage = pages.at(-1)?.page ?? null;
  return toPagedRejectedRows([
    ...pages.flatMap((page) => page.rejected.map((record) => ({ record, page: page.page }))),
    ...refused.map((record) => ({
      record,
      page: (record.rawId === undefined ? undefined : pageOf.get(record.rawId)) ?? lastPage,
    })),
  ]);
}

/** The lowest open gap of a commit's pages, `null` when none has one. */
function lowestOpenGap(pages: readonly RangePage[]): number | null {
  const gaps = pages.flatMap((page) =>
    page.openGap === null || page.openGap === undefined ? [] : [page.openGap],
  );
  return gaps.length === 0 ? null : Math.min(...gaps);
}

/**
 * A backfill mostly writes records stored nowhere yet: its statements then skip looking them up
 * (a COPY that takes them for new). A batch whose rawIds meet stored records (a catch-up's first
 * ranges, below the stream's watermark; a repair; the pages a range by page number reads past its
 * last) is written the full way. One probe of the primary key a batch tells which, where a COPY
 * that met a stored record failed on the unique index, was rolled back and left an error in the
 * server's log each time. A record stored between the probe and the copy still fails it: the
 * batch is then written again the full way.
 */
async function writeProbed<T>(
  database: Database,
  span: { lo: number; hi: number } | null,
  write: (assumeNew: boolean) => Promise<T>,
): Promise<T> {
  if (span !== null && (await anyStoredBetween(database.db, span.lo, span.hi))) return write(false);
  try {
    return await write(true);
  } catch (error) {
    if (!(error instanceof DatabaseError) || error.sqlstate !== UNIQUE_VIOLATION) throw error;
    return write(false);
  }
}

/** The lowest and highest rawId of a commit's pages; `null` when they hold none. */
function rawIdSpan(pages: readonly RangePage[]): { lo: number; hi: number } | null {
  let lo = Number.POSITIVE_INFINITY;
  let hi = Number.NEGATIVE_INFINITY;
  for (const page of pages) {
    for (const rawId of rawIdsOf(page.records)) {
      if (rawId < lo) lo = rawId;
      if (rawId > hi) hi = rawId;
    }
  }
  return lo > hi ? null : { lo, hi };
}
