import { accountKey } from './catalog.js';
import { type Column, f64, u8, u32 } from './columns.js';

/** Action codes of the compact table; the order is the wire name's index in {@link ACTIONS}. */
export const ACTIONS = ['mint', 'transfer', 'burn', 'bundle', 'set'] as const;
export const MINT = 0;
export const TRANSFER = 1;
export const BURN = 2;
export const BUNDLE = 3;
export const SET = 4;

/** One movement inside a bundle. */
export interface BundleItem {
  token: number;
  from: number;
  to: number;
  amount: string;
}

/** What a few records carry beyond the compact columns. */
export interface RecordExtra {
  bundle?: { items: BundleItem[]; failIndex: number | null; failMsg: string };
  express?: boolean;
  /** Chain a mint comes from or a burn withdraws to (kept in the `chain` column once stored). */
  targetChain?: string;
  /** A record submitted through `POST /tx`: its text fields as sent. */
  posted?: PostedFields;
}

/** The fields of a transaction submitted through `POST /tx`, kept as the sender wrote them. */
export interface PostedFields {
  tokenSymbol: string;
  from: string;
  to: string;
  amount: string;
  fee: string;
  feeRecipient: string;
  tokenID: string;
  chainType: string;
  chainID: string;
  data: string;
  version: string;
  sig: string;
  ledgerHash: string;
}

/** The skeleton of a new record: what decides balances and list membership. */
export interface NewRecord {
  action: number;
  token: number;
  from: number;
  to: number;
  amount: string;
  nonce: number;
  arrivedAtMs: number;
  extra?: RecordExtra;
}

/** Chains a mint comes from or a burn goes to; stored as a small number per record. */
export const CHAINS = ['ethereum', 'arweave', 'bsc'] as const;

const PACKAGED = 1;
const TARGET_LANDED = 2;

/**
 * Every record of the simulated ledger in compact columns, indexed by position (records are
 * appended in rawId order, so position order is rawId order; a record visible late still takes
 * its position at arrival). Text that can be derived from the
 * seed and the rawId is not stored here; see `record-json.ts`.
 */
export class RecordTable {
  readonly rawId = f64(4096);
  readonly action = u8(4096);
  readonly token = u8(4096);
  readonly from = u32(4096);
  readonly to = u32(4096);
  readonly nonce = f64(4096);
  readonly flags = u8(4096);
  readonly batch = u32(4096);
  readonly timestamp = f64(4096);
  readonly arrivedAt = f64(4096);
  /** Index in {@link CHAINS} of the record's target chain (mints and burns). */
  readonly chain = u8(4096);
  readonly amount: string[] = [];
  readonly extras = new Map<number, RecordExtra>();
  /** When each burn's target-chain hash landed (ms): a sparse column, only burns that waited for it here. */
  readonly targetLandedAt = new Map<number, number>();

  readonly accounts: string[] = [];
  private readonly accountIndex = new Map<string, number>();
  /** Positions of each account's records (as sender or recipient), ascending. */
  private readonly byAccount: Column<Uint32Array>[] = [];

  get count(): number {
    return this.rawId.length;
  }

  /** The account's number, registering it when new. */
  account(id: string): number {
    const key = accountKey(id);
    const known = this.accountIndex.get(key);
    if (known !== undefined) return known;
    const index = this.accounts.length;
    this.accounts.push(id);
    this.accountIndex.set(key, index);
    this.byAccount.push(u32(16));
    return index;
  }

  /** The account's number when it has ever been seen; EVM addresses match in any case. */
  findAccount(id: string): number | undefined {
    return this.accountIndex.get(accountKey(id));
  }

  accountRecords(account: number): Column<Uint32Array> | undefined {
    return this.byAccount[account];
  }

  /**
   * Appends a record; returns its position. `packaged`: already stored (the initial history).
   * `listed` false leaves it out of its accounts' lists until {@link RecordTable.listInAccounts}
   * (a record visible late). Default true.
   */
  append(
    record: NewRecord,
    rawId: number,
    options: { packaged?: { batch: number; timestamp: number }; listed?: boolean } = {},
  ): number {
    const { packaged, listed = true } = options;
    const pos = this.count;
    this.rawId.push(rawId);
    this.action.push(record.action);
    this.token.push(record.token);
    this.from.push(record.from);
    this.to.push(record.to);
    this.nonce.push(record.nonce);
    this.amount.push(record.amount);
    this.arrivedAt.push(record.arrivedAtMs);
    this.flags.push(packaged ? PACKAGED | TARGET_LANDED : 0);
    this.batch.push(packaged?.batch ?? 0);
    this.timestamp.push(packaged?.timestamp ?? 0);
    const { targetChain, ...rest } = record.extra ?? {};
    this.chain.push(Math.max(0, CHAINS.indexOf((targetChain ?? 'ethereum') as (typeof CHAINS)[number])));
    // Only bundles, fast withdrawals and submitted records keep an object; the chain is a number.
    if (rest.bundle || rest.express || rest.posted) this.extras.set(pos, rest);
    if (listed) {
      this.byAccount[record.from]?.push(pos);
      if (record.to !== record.from) this.byAccount[record.to]?.push(pos);
    }
    return pos;
  }

  /** Puts a record appended unlisted into its accounts' lists, in its rawId place. */
  listInAccounts(pos: number): void {
    const from = this.from.get(pos);
    const to = this.to.get(pos);
    this.byAccount[from]?.insertSorted(pos);
    if (to !== from) this.byAccount[to]?.insertSorted(pos);
  }

  isPackaged(pos: number): boolean {
    return (this.flags.get(pos) & PACKAGED) !== 0;
  }

  targetLanded(pos: number): boolean {
    return (this.flags.get(pos) & TARGET_LANDED) !== 0;
  }

  markPackaged(pos: number, batch: number, timestamp: number): void {
    this.flags.set(pos, this.flags.get(pos) | PACKAGED);
    this.batch.set(pos, batch);
    this.timestamp.set(pos, timestamp);
  }

  markTargetLanded(pos: number, at: number): void {
    this.flags.set(pos, this.flags.get(pos) | TARGET_LANDED);
    this.targetLandedAt.set(pos, at);
  }

  /** Bytes held by the columns (strings and maps not counted). */
  columnBytes(): number {
    const columns = [
      this.rawId,
      this.action,
      this.token,
      this.from,
      this.to,
      this.nonce,
      this.flags,
      this.batch,
      this.timestamp,
      this.arrivedAt,
      this.chain,
    ];
    return columns.reduce((sum, c) => sum + c.bytes(), 0);
  }
}
