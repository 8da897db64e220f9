import {
  chainHashBytes,
  createTokens,
  createWellKnownAccounts,
  inventAccount,
  type TokenDef,
  type WellKnownAccounts,
} from './catalog.js';
import { lastAtMost } from './columns.js';
import { EvmKeyring } from './evm-keys.js';
import type { RecordFaults } from './faults.js';
import { LedgerHashIndex } from './hash-index.js';
import { LateRecords } from './late-records.js';
import { LedgerBook } from './ledger-book.js';
import { type ListFilter, ListIndex, type ListView } from './list-index.js';
import { createRng, type Rng } from './random.js';
import { createRecordGenerator, type RecordGenerator } from './record-generator.js';
import {
  batchIdOf,
  isTamperedAt,
  malformedKindOf,
  malformedText,
  mintChainHashOf,
  type RenderContext,
  rawIdFromHashBytes,
  renderRecord,
  tamperedRecord,
  type WireRecord,
} from './record-json.js';
import { BURN, CHAINS, MINT, type NewRecord, RecordTable } from './record-table.js';
import type { GroundTruthRecord } from './types.js';

/** Settings the ledger model needs (already defaulted). */
export interface LedgerSettings {
  seed: number;
  records: number;
  holeRate: number;
  packageDelayMs: number;
  burnTargetDelayMs: number;
  jsonCacheSize: number;
  historyEndMs: number;
  /** Share of arriving records visible only `delayMs` after their arrival. Default none. */
  late?: { rate: number; delayMs: number };
}

/** One page of a list, ready to serialise. */
export interface PageSlice {
  currentPage: number;
  totalPages: number;
  texts: Buffer[];
}

/**
 * The simulated ledger: its records, balances, lists and the passage of records from
 * `confirmed` to `packaged`. No HTTP here.
 */
export class SimulatedLedger {
  readonly tokens: TokenDef[] = createTokens();
  readonly keys: EvmKeyring;
  readonly wellKnown: WellKnownAccounts;
  readonly table = new RecordTable();
  readonly book: LedgerBook;
  readonly lists: ListIndex;
  /** Arrived records not visible yet: in no list and no look-up, nor in the ground truth. */
  private readonly late: LateRecords;
  private readonly generator: RecordGenerator;
  private readonly holes: Rng;
  private readonly ctx: RenderContext;
  private nextRawId = 1;
  private batchCounter = 0;
  /** Positions waiting to be packaged, in arrival order. */
  private readonly pendingPackage: number[] = [];
  private pendingHead = 0;
  /** Packaged burns waiting for their target-chain hash: [position, due ms]. */
  private readonly pendingTarget: Array<[number, number]> = [];
  private pendingTargetHead = 0;
  /** Positions by ledgerHash of the records rendered so far; every position below `hashedUpTo` is in. */
  private readonly hashes = new LedgerHashIndex();
  private hashedUpTo = 0;
  /** Cached record texts as UTF-8 bytes: flat and compact (a built-up string is a rope of its pieces). */
  private readonly cache: Array<Buffer | undefined> = [];
  private readonly cacheOrder: number[] = [];
  private cacheOrderHead = 0;
  private cached = 0;

  constructor(private readonly settings: LedgerSettings) {
    const { seed } = settings;
    this.keys = new EvmKeyring(seed);
    this.wellKnown = createWellKnownAccounts(seed, this.keys);
    const feeRecipient = this.table.account(this.wellKnown.feeRecipient);
    const marketMaker = this.table.account(this.wellKnown.marketMaker);
    const owner = this.table.account(this.wellKnown.owner);
    this.book = new LedgerBook(this.tokens, feeRecipient);
    this.late = new LateRecords({
      seed,
      rate: settings.late?.rate ?? 0,
      delayMs: settings.late?.delayMs ?? 0,
    });
    this.lists = new ListIndex(this.table, this.late);
    const accountRng = createRng(seed, 0xacc);
    const poolSize = Math.min(5000, Math.max(40, Math.floor(settings.records / 100)));
    const accounts: number[] = [];
    for (let i = 0; i < poolSize; i++)
      accounts.push(this.table.account(inventAccount(accountRng, this.keys)));
    this.generator = createRecordGenerator({
      seed,
      table: this.table,
      book: this.book,
      tokens: this.tokens,
      accounts,
      marketMaker,
      owner,
      keys: this.keys,
    });
    this.holes = createRng(seed, 0x401e);
    this.ctx = {
      seed,
      table: this.table,
      tokens: this.tokens,
      feeRecipient: this.wellKnown.feeRecipient,
      legacyMaxRawId: 0,
      batchIds: [''],
      keys: this.keys,
    };
    this.generateHistory(settings.records);
  }

  private generateHistory(n: number): void {
    const batchRng = createRng(this.settings.seed, 0xba7);
    let left = 0;
    let timestamp = 0;
    for (let i = 0; i < n; i++) {
      if (left === 0) {
        left = batchRng.int(1, 12);
        this.newBatch();
        timestamp = this.settings.historyEndMs - (n - i) * 1100;
      }
      left--;
      const record = this.generator.next(timestamp, timestamp);
      this.table.append(record, this.takeRawId(), { packaged: { batch: this.batchCounter, timestamp } });
      this.cache.push(undefined);
    }
    const lastLegacy = Math.floor(n * 0.03) - 1;
    this.ctx.legacyMaxRawId = lastLegacy >= 0 ? this.table.rawId.get(lastLegacy) : 0;
  }

  /** Opens the next storage batch; its id is made once here, not on every render. */
  private newBatch(): number {
    this.batchCounter++;
    this.ctx.batchIds.push(batchIdOf(this.settings.seed, this.batchCounter));
    return this.batchCounter;
  }

  private takeRawId(): number {
    if (this.settings.holeRate > 0 && this.holes.chance(this.settings.holeRate)) {
      this.nextRawId += this.holes.int(1, 3);
    }
    return this.nextRawId++;
  }

  /**
   * Appends `n` generated records as `confirmed`, some of them hidden for a while when late
   * records are asked for; returns the highest rawId given out (visible or not).
   */
  arrive(n: number, now: number): number {
    for (let i = 0; i < n; i++) {
      const record = this.generator.next(now, now);
      const rawId = this.takeRawId();
      const late = this.late.isLate(rawId);
      const pos = this.appendLive(record, rawId, late);
      if (late) this.late.hide(pos, now);
    }
    const count = this.table.count;
    return count === 0 ? 0 : this.table.rawId.get(count - 1);
  }

  /** Appends a record submitted through `POST /tx` (its movements already checked); never late. */
  appendSubmitted(record: NewRecord): number {
    this.book.apply(record);
    return this.appendLive(record, this.takeRawId(), false);
  }

  private appendLive(record: NewRecord, rawId: number, hidden: boolean): number {
    const pos = this.table.append(record, rawId, { listed: !hidden });
    // Pushing keeps the cache array densely packed; writing far past its end would not.
    this.cache.push(undefined);
    this.pendingPackage.push(pos);
    return pos;
  }

  /** The highest visible rawId, or 0. */
  headRawId(): number {
    const visible = this.visibleCount();
    return visible === 0 ? 0 : this.table.rawId.get(this.late.visiblePosition(visible - 1));
  }

  /** Number of records visible now (every record but the late ones still hidden). */
  visibleCount(): number {
    return this.table.count - this.late.count;
  }

  /** Number of late records still hidden. */
  hiddenCount(): number {
    return this.late.count;
  }

  /** Whether the record at `pos` is visible now. */
  isVisible(pos: number): boolean {
    return !this.late.isHidden(pos);
  }

  /**
   * Makes the late records due by `now` (all of them when `all`) visible: each goes into its
   * accounts' lists and the filtered lists already built, in its rawId place.
   */
  reveal(now: number, all = false): void {
    if (this.late.count === 0) return;
    for (const pos of this.late.release(now, all)) {
      this.table.listInAccounts(pos);
      this.lists.reveal(pos);
    }
  }

  /**
   * Moves time forward: makes due late records visible, packages due records (one storage batch
   * per call) and lands due burns; `settle` does all of it at once, whatever is due.
   */
  advance(now: number, settle = false): void {
    this.reveal(now, settle);
    const table = this.table;
    let batch = 0;
    while (this.pendingHead < this.pendingPackage.length) {
      const pos = this.pendingPackage[this.pendingHead]!;
      if (!settle && table.arrivedAt.get(pos) + this.settings.packageDelayMs > now) break;
      if (batch === 0) batch = this.newBatch();
      table.markPackaged(pos, batch, now);
      this.invalidate(pos);
      if (table.action.get(pos) === BURN)
        this.pendingTarget.push([pos, now + this.settings.burnTargetDelayMs]);
      this.pendingHead++;
    }
    if (this.pendingHead > 4096 && this.pendingHead * 2 > this.pendingPackage.length) {
      this.pendingPackage.splice(0, this.pendingHead);
      this.pendingHead = 0;
    }
    while (this.pendingTargetHead < this.pendingTarget.length) {
      const [pos, due] = this.pendingTarget[this.pendingTargetHead]!;
      if (!settle && due > now) break;
      table.markTargetLanded(pos, now);
      this.invalidate(pos);
      this.pendingTargetHead++;
    }
    if (this.pendingTargetHead > 4096 && this.pendingTargetHead * 2 > this.pendingTarget.length) {
      this.pendingTarget.splice(0, this.pendingTargetHead);
      this.pendingTargetHead = 0;
    }
  }

  /** Records not yet final (`confirmed`, or burns without their target hash). */
  pendingCount(): number {
    return (
      this.pendingPackage.length - this.pendingHead + (this.pendingTarget.length - this.pendingTargetHead)
    );
  }

  private invalidate(pos: number): void {
    if (this.cache[pos] !== undefined) {
      this.cache[pos] = undefined;
      this.cached--;
    }
  }

  /** The record's JSON text as the service holds it now, serialised once and cached. */
  recordBytes(pos: number): Buffer {
    const hit = this.cache[pos];
    if (hit !== undefined) return hit;
    const text = this.freshText(pos);
    // A buffer of its own: a slice of the shared pool would keep its whole 8 KiB slab alive.
    const bytes = Buffer.allocUnsafeSlow(Buffer.byteLength(text));
    bytes.write(text);
    this.cache[pos] = bytes;
    this.cached++;
    this.cacheOrder.push(pos);
    while (this.cached > this.settings.jsonCacheSize && this.cacheOrderHead < this.cacheOrder.length) {
      this.invalidate(this.cacheOrder[this.cacheOrderHead++]!);
    }
    if (this.cacheOrderHead > 65536 && this.cacheOrderHead * 2 > this.cacheOrder.length) {
      this.cacheOrder.splice(0, this.cacheOrderHead);
      this.cacheOrderHead = 0;
    }
    return bytes;
  }

  recordText(pos: number): string {
    return this.recordBytes(pos).toString('utf8');
  }

  private freshText(pos: number): string {
    // V8's JSON.stringify gives a flat string, cheaper to encode than one built by concatenation.
    return JSON.stringify(this.renderAt(pos));
  }

  /** Renders the record at `pos` and notes its ledgerHash. */
  private renderAt(pos: number): WireRecord {
    const record = renderRecord(this.ctx, pos);
    this.hashes.add(record.ledgerHash, pos);
    return record;
  }

  /**
   * The ground-truth line of a record: its current text plus `tokenTag`, `arrivedAtMs`,
   * `packagedAtMs`, `targetLandedAtMs` and `malformed` and `tampered` marks. Uses the cache without filling it, so a full dump does not
   * evict hot pages.
   */
  groundTruthText(pos: number, faults: RecordFaults): string {
    const rawId = this.table.rawId.get(pos);
    const tampered = isTamperedAt(this.settings.seed, rawId, faults.tamperedRate);
    const text = tampered
      ? JSON.stringify(tamperedRecord(this.renderAt(pos)))
      : (this.cache[pos]?.toString('utf8') ?? this.freshText(pos));
    const tag = this.tokens[this.table.token.get(pos)]?.tag ?? '';
    const kind = malformedKindOf(this.settings.seed, rawId, faults.malformedRate);
    const marks = `${kind ? `,"malformed":"${kind}"` : ''}${tampered ? ',"tampered":true' : ''}`;
    return `${text.slice(0, -1)},"tokenTag":"${tag}","arrivedAtMs":${this.table.arrivedAt.get(pos)}${this.changeTimes(pos)}${marks}}`;
  }

  /** The change times of the ground-truth line: when packaged, and when its target hash landed. */
  private changeTimes(pos: number): string {
    return `,"packagedAtMs":${this.packagedAt(pos)},"targetLandedAtMs":${this.table.targetLandedAt.get(pos) ?? null}`;
  }

  private packagedAt(pos: number): number | null {
    return this.table.isPackaged(pos) ? this.table.timestamp.get(pos) : null;
  }

  /** The bytes served publicly: tampered and malformed when the record's rawId is chosen at those shares. */
  servedBytes(pos: number, faults: RecordFaults): Buffer {
    const rawId = this.table.rawId.get(pos);
    const kind = malformedKindOf(this.settings.seed, rawId, faults.malformedRate);
    const tampered = isTamperedAt(this.settings.seed, rawId, faults.tamperedRate);
    if (kind === undefined && !tampered) return this.recordBytes(pos);
    const record = tampered ? tamperedRecord(this.renderAt(pos)) : this.renderAt(pos);
    return Buffer.from(kind === undefined ? JSON.stringify(record) : malformedText(record, kind));
  }

  render(pos: number): WireRecord {
    return this.renderAt(pos);
  }

  groundTruth(pos: number, faults: RecordFaults): GroundTruthRecord {
    const rawId = this.table.rawId.get(pos);
    const tampered = isTamperedAt(this.settings.seed, rawId, faults.tamperedRate);
    const kind = malformedKindOf(this.settings.seed, rawId, faults.malformedRate);
    return {
      ...(tampered ? tamperedRecord(this.renderAt(pos)) : this.renderAt(pos)),
      tokenTag: this.tokens[this.table.token.get(pos)]?.tag ?? '',
      arrivedAtMs: this.table.arrivedAt.get(pos),
      packagedAtMs: this.packagedAt(pos),
      targetLandedAtMs: this.table.targetLandedAt.get(pos) ?? null,
      ...(kind ? { malformed: kind } : {}),
      ...(tampered ? { tampered: true as const } : {}),
    };
  }

  /**
   * Resolves wire filter values; undefined when the account was never seen. `tokens`: the token
   * numbers of the tags asked for (empty = an unknown tag, matching nothing); absent = any token.
   */
  list(filter: {
    account?: string;
    tokens?: readonly number[];
    action?: number;
    withoutAction?: number;
  }): ListView | undefined {
    const resolved: ListFilter = { action: filter.action, withoutAction: filter.withoutAction };
    if (filter.account !== undefined) {
      const account = this.table.findAccount(filter.account);
      if (account === undefined) return undefined;
      resolved.account = account;
    }
    const tokens = filter.tokens;
    // One token (or none known) shares its list with the page dialect's single tag.
    if (tokens !== undefined && tokens.length <= 1) resolved.token = tokens[0] ?? -1;
    else if (tokens !== undefined) resolved.tokens = tokens;
    return this.lists.view(resolved);
  }

  /** Page `page` (1-based) of a list, newest first, 10 a page. */
  page(view: ListView | undefined, page: number, faults: RecordFaults): PageSlice {
    const length = view?.length ?? 0;
    const totalPages = Math.ceil(length / 10);
    const texts: Buffer[] = [];
    if (view) {
      const top = length - 1 - (page - 1) * 10;
      for (let i = top; i > top - 10 && i >= 0; i--) texts.push(this.servedBytes(view.at(i), faults));
    }
    return { currentPage: page, totalPages, texts };
  }

  /**
   * Key paging: up to `count` records after (asc) or before (desc) rawId `cursor`, exclusive;
   * without a cursor from the oldest (asc) or the newest (desc). A binary search and a slice.
   */
  keyPage(
    view: ListView | undefined,
    input: { cursor: number | undefined; order: 'asc' | 'desc'; count: number; faults: RecordFaults },
  ): { texts: Buffer[]; hasNextPage: boolean } {
    const length = view?.length ?? 0;
    const texts: Buffer[] = [];
    if (!view || length === 0) return { texts, hasNextPage: false };
    const rawIdAt = (i: number) => this.table.rawId.get(view.at(i));
    const { cursor, count, faults } = input;
    if (input.order === 'asc') {
      let i = cursor === undefined ? 0 : lastAtMost(length, rawIdAt, cursor) + 1;
      for (; i < length && texts.length < count; i++) texts.push(this.servedBytes(view.at(i), faults));
      return { texts, hasNextPage: i < length };
    }
    let i = cursor === undefined ? length - 1 : lastAtMost(length, rawIdAt, cursor - 1);
    for (; i >= 0 && texts.length < count; i--) texts.push(this.servedBytes(view.at(i), faults));
    return { texts, hasNextPage: i >= 0 };
  }

  /** Table position of a rawId, or undefined. */
  positionOf(rawId: number): number | undefined {
    const pos = lastAtMost(this.table.count, (i) => this.table.rawId.get(i), rawId);
    return pos >= 0 && this.table.rawId.get(pos) === rawId ? pos : undefined;
  }

  /**
   * Table position of the record with this ledgerHash (any case), or undefined (also while the
   * record is hidden). Records served or read before are found at once; the first look-up of one
   * never rendered hashes the rest.
   */
  byLedgerHash(hash: string): number | undefined {
    const wanted = hash.toLowerCase();
    const find = () => this.hashes.candidates(wanted).find((pos) => this.renderAt(pos).ledgerHash === wanted);
    const found = find() ?? this.hashRest(find);
    return found !== undefined && this.isVisible(found) ? found : undefined;
  }

  /** Hashes the records never rendered, then looks again. */
  private hashRest(find: () => number | undefined): number | undefined {
    if (this.hashedUpTo === this.table.count) return undefined;
    while (this.hashedUpTo < this.table.count) this.renderAt(this.hashedUpTo++);
    return find();
  }

  byMintChainHash(hash: string): number | undefined {
    const bytes = chainHashBytes(hash);
    if (!bytes) return undefined;
    const rawId = rawIdFromHashBytes(this.settings.seed, bytes);
    const pos = this.positionOf(rawId);
    if (pos === undefined || !this.isVisible(pos) || this.table.action.get(pos) !== MINT) return undefined;
    const chain = CHAINS[this.table.chain.get(pos)] ?? 'ethereum';
    const expected = mintChainHashOf(this.settings.seed, rawId, chain);
    const matches = hash.startsWith('0x') ? expected === hash.toLowerCase() : expected === hash;
    return matches ? pos : undefined;
  }

  /** The batch id of a batch number (for tests of shared ids). */
  batchId(batch: number): string {
    return batchIdOf(this.settings.seed, batch);
  }

  cacheSize(): number {
    return this.cached;
  }
}
