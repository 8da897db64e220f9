/**
 * Array-backed implementations of the sync engine's ports (it is handed its store and fetch): a
 * live newest-first list served page by page, and the in-memory store (`test/helpers`).
 */

import type { LedgerTx, TxPage } from '../../src/domain/model.js';

import type { StreamSpec } from '../../src/domain/stream-key.js';
import type { FetchPage } from '../../src/sync/ports/fetches.js';
import { makeLedgerTx } from '../helpers/ledger-tx.js';
import type { MemoryStore } from '../helpers/memory-store.js';

export { MemoryStore } from '../helpers/memory-store.js';

/** A `confirmed` record of a busy pair of accounts, with an amount past 2^64. */
export function makeTx(rawId: number, overrides: Partial<LedgerTx> = {}): LedgerTx {
  return makeLedgerTx({
    rawId,
    id: '',
    tokenSymbol: 'USDT',
    from: '0xaaa',
    to: rawId % 3 === 0 ? '0xbbb' : '0xccc',
    amount: `${rawId}000000000000000000000000000000000000000000000000000000000000000000000000000`,
    fee: '1',
    feeRecipient: '0xfee',
    nonce: String(1_700_000_000_000 + rawId),
    tokenID: '0xdac',
    status: 'confirmed',
    timestamp: 0,
    ...overrides,
  });
}

/** A newest-first list that grows at the head, served in pages of 10 as the real service does. */
export class LiveList {
  /** Ascending by rawId; the page view reverses it. */
  readonly records: LedgerTx[] = [];
  private nextRawId: number;
  private readonly step: () => number;
  /** Pages served, in the order the "server" computed them. */
  readonly served: number[] = [];
  /** Called right after a page is computed: arrivals between requests go here. */
  afterServe: (page: number) => void = () => {};
  /** Called before a page is computed; may replace the answer. */
  override: (page: number, attempt: number) => TxPage | undefined = () => undefined;
  /** Upper bound of the random delay before a request is answered, in ms. */
  jitterMs = 0;
  private readonly attempts = new Map<number, number>();

  constructor(options: { count: number; firstRawId?: number; step?: () => number }) {
    this.nextRawId = options.firstRawId ?? 1;
    this.step = options.step ?? (() => 1);
    this.add(options.count);
  }

  /** Appends `n` records at the head. */
  add(n: number): void {
    for (let i = 0; i < n; i++) {
      this.records.push(makeTx(this.nextRawId));
      this.nextRawId += this.step();
    }
  }

  page(page: number): TxPage {
    const newestFirst = [...this.records].reverse();
    return {
      currentPage: page,
      totalPages: Math.ceil(newestFirst.length / 10),
      txs: newestFirst.slice((page - 1) * 10, page * 10),
      rejected: [],
    };
  }

  readonly fetchPage: FetchPage = async (_spec: StreamSpec, page: number) => {
    if (this.jitterMs > 0) await new Promise((r) => setTimeout(r, Math.random() * this.jitterMs));
    const attempt = (this.attempts.get(page) ?? 0) + 1;
    this.attempts.set(page, attempt);
    const answer = this.override(page, attempt) ?? this.page(page);
    this.served.push(page);
    this.afterServe(page);
    return structuredClone(answer);
  };
}

/** The rawIds stored, ascending. */
export function storedIds(store: MemoryStore): number[] {
  return [...store.rows.keys()].sort((a, b) => a - b);
}
