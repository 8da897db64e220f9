import type { TokenDef } from './catalog.js';
import { inventAccount } from './catalog.js';
import type { EvmKeyring } from './evm-keys.js';
import type { LedgerBook } from './ledger-book.js';
import { createRng, type Rng } from './random.js';
import {
  BUNDLE,
  BURN,
  type BundleItem,
  MINT,
  type NewRecord,
  type RecordExtra,
  type RecordTable,
  SET,
  TRANSFER,
} from './record-table.js';

/** Invents the next record of the ledger: a pure function of the seed and everything before it. */
export interface RecordGenerator {
  next(arrivedAtMs: number, nonceBase: number): NewRecord;
}

const BUNDLE_FAIL_MESSAGES = [
  'err_insufficient_balance',
  'err_expired',
  'err_invalid_signature',
  'err_nonce_too_low',
];

/** What the generator is made from. */
interface GeneratorInit {
  seed: number;
  table: RecordTable;
  book: LedgerBook;
  tokens: TokenDef[];
  /** Accounts the data set draws from (numbers in the table). */
  accounts: number[];
  marketMaker: number;
  owner: number;
  /** Where new EVM accounts get their keys. */
  keys: EvmKeyring;
}

/** The random choices records are made of: tokens by weight, skewed accounts, amounts. */
interface Picks {
  token(): number;
  /** A skewed pick: a few accounts are busy, most are quiet. */
  account(): number;
  /** Now and then an account never seen before, else {@link Picks.account}. */
  freshAccount(): number;
  mintAmount(token: number): string;
  /** The odd enormous amount: up to 78 digits (2^256 is 78 digits long). */
  enormousAmount(): string;
  /** Up to 60% of a balance. */
  share(balance: bigint): bigint;
}

function createPicks(init: GeneratorInit, rng: Rng): Picks {
  const { table, tokens, accounts } = init;
  const weights = tokens.map((t) => t.weight);
  const totalWeight = weights.reduce((a, b) => a + b, 0);
  const account = (): number => accounts[Math.floor(rng.next() ** 2.2 * accounts.length)] ?? 0;
  return {
    token() {
      let r = rng.next() * totalWeight;
      for (let i = 0; i < weights.length; i++) {
        r -= weights[i] ?? 0;
        if (r < 0) return i;
      }
      return 0;
    },
    account,
    freshAccount: () => (rng.chance(0.02) ? table.account(inventAccount(rng, init.keys)) : account()),
    mintAmount(token) {
      const decimals = tokens[token]?.decimals ?? 6;
      const units = rng.int(1, 99_999);
      const scale = Math.max(0, decimals - rng.int(0, 4));
      return (BigInt(units) * 10n ** BigInt(scale)).toString();
    },
    enormousAmount() {
      const digits = rng.int(70, 77);
      let text = String(rng.int(1, 9));
      while (text.length < digits) text += rng.u32().toString().padStart(9, '0');
      return text.slice(0, digits);
    },
    share: (balance) => (balance * BigInt(rng.int(1, 600))) / 1000n,
  };
}

/**
 * Creates the generator. Actions come in realistic proportions (transfers most, then mints, burns,
 * bundles, a few `set`s); senders only spend what they hold, so balances never go negative.
 */
export function createRecordGenerator(init: GeneratorInit): RecordGenerator {
  const { table, book, tokens } = init;
  const rng = createRng(init.seed, 0x6e4);
  const picks = createPicks(init, rng);

  const mint = (token: number, to: number, arrivedAtMs: number, nonce: number): NewRecord => {
    // Enormous mints go to a fresh account that is never picked as a sender, so a 78-digit
    // balance does not spread into every later transfer and swamp the volumes of reports.
    const enormous = tokens[token]?.decimals === 18 && rng.chance(0.002);
    const receiver = enormous ? table.account(inventAccount(rng, init.keys)) : to;
    return {
      action: MINT,
      token,
      from: receiver,
      to: receiver,
      amount: enormous ? picks.enormousAmount() : picks.mintAmount(token),
      nonce,
      arrivedAtMs,
      extra: { targetChain: rng.pick(tokens[token]?.chains ?? ['ethereum']) },
    };
  };

  const spend = (action: number, token: number, from: number, extra?: RecordExtra): bigint | null => {
    const fee = BigInt(book.fee(action, token, extra?.targetChain));
    const available = book.balance(from, token) - fee;
    if (available <= 0n) return null;
    const amount = picks.share(available);
    return amount > 0n ? amount : null;
  };

  const choose = (arrivedAtMs: number, nonce: number): NewRecord => {
    const r = rng.next();
    const token = picks.token();
    const from = picks.account();
    const made = { token, from, nonce, arrivedAtMs };
    if (r < 0.18) return mint(token, picks.freshAccount(), arrivedAtMs, nonce);
    if (r < 0.72) {
      const express = rng.chance(0.03) && (tokens[token]?.chainType ?? '').includes('ethereum');
      const amount = spend(TRANSFER, token, from);
      if (amount === null) return mint(token, from, arrivedAtMs, nonce);
      const to = express ? init.marketMaker : picks.freshAccount();
      return {
        action: TRANSFER,
        ...made,
        to,
        amount: amount.toString(),
        ...(express ? { extra: { express: true } } : {}),
      };
    }
    if (r < 0.86) {
      const extra: RecordExtra = { targetChain: rng.pick(tokens[token]?.chains ?? ['ethereum']) };
      const amount = spend(BURN, token, from, extra);
      if (amount === null) return mint(token, from, arrivedAtMs, nonce);
      return { action: BURN, ...made, to: picks.account(), amount: amount.toString(), extra };
    }
    if (r < 0.995)
      return (
        inventBundle({ rng, book, picks }, from, arrivedAtMs, nonce) ?? mint(token, from, arrivedAtMs, nonce)
      );
    return { action: SET, token, from: init.owner, to: init.owner, amount: '0', nonce, arrivedAtMs };
  };

  // A sender never signs the same nonce twice (the service refuses a replay). Records arriving
  // together share a nonce base, and two of them with the same signed fields would share a
  // ledgerHash: one would be set aside as a clash, which the real service never shows.
  const lastNonce = new Map<number, number>();
  return {
    next(arrivedAtMs, nonceBase) {
      const record = choose(arrivedAtMs, nonceBase - rng.int(0, 4000));
      const last = lastNonce.get(record.from);
      if (last !== undefined && record.nonce <= last) record.nonce = last + 1;
      lastNonce.set(record.from, record.nonce);
      book.apply(record);
      return record;
    },
  };
}

/**
 * A bundle of two or three items by `from` and other senders, each spending part of what it
 * holds; `null` when fewer than two items could be made or `from` cannot pay the fee.
 */
function inventBundle(
  ctx: { rng: Rng; book: LedgerBook; picks: Picks },
  from: number,
  arrivedAtMs: number,
  nonce: number,
): NewRecord | null {
  const { rng, book, picks } = ctx;
  const items: BundleItem[] = [];
  const count = rng.int(2, 3);
  const spentBy = new Map<number, bigint>();
  for (let i = 0; i < count; i++) {
    const token = picks.token();
    const itemFrom = i === 0 ? from : picks.account();
    const key = itemFrom * 8 + token;
    const available = book.balance(itemFrom, token) - (spentBy.get(key) ?? 0n);
    if (available <= 0n) continue;
    const amount = picks.share(available);
    if (amount <= 0n) continue;
    spentBy.set(key, (spentBy.get(key) ?? 0n) + amount);
    items.push({ token, from: itemFrom, to: picks.account(), amount: amount.toString() });
  }
  if (items.length < 2) return null;
  const failed = rng.chance(0.1);
  const firstToken = items[0]?.token ?? 0;
  if (BigInt(book.fee(BUNDLE, firstToken)) > book.balance(from, firstToken)) return null;
  const failIndex = failed ? rng.int(-1, items.length - 1) : null;
  const bundle = { items, failIndex, failMsg: rng.pick(BUNDLE_FAIL_MESSAGES) };
  return {
    action: BUNDLE,
    token: firstToken,
    from,
    to: from,
    amount: '0',
    nonce,
    arrivedAtMs,
    extra: { bundle },
  };
}

export type { Rng };
