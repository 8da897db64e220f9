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

/**
 * Creates the generator. Actions come in realistic proportions (transfers most, then mints, burns,
 * bundles, a few `set`s); senders only spend what they hold, so balances never go negative.
 */
export function createRecordGenerator(init: {
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
}): RecordGenerator {
  const { table, book, tokens, accounts, keys } = init;
  const rng = createRng(init.seed, 0x6e4);
  const weights = tokens.map((t) => t.weight);
  const totalWeight = weights.reduce((a, b) => a + b, 0);

  const pickToken = (): number => {
    let r = rng.next() * totalWeight;
    for (let i = 0; i < weights.length; i++) {
      r -= weights[i] ?? 0;
      if (r < 0) return i;
    }
    return 0;
  };
  // A skewed pick: a few accounts are busy, most are quiet.
  const pickAccount = (): number => accounts[Math.floor(rng.next() ** 2.2 * accounts.length)] ?? 0;
  const freshAccount = (): number =>
    rng.chance(0.02) ? table.account(inventAccount(rng, keys)) : pickAccount();

  /** The odd enormous amount: up to 78 digits (2^256 is 78 digits long). */
  const enormousAmount = (): string => {
    const digits = rng.int(70, 77);
    let text = String(rng.int(1, 9));
    while (text.length < digits) text += rng.u32().toString().padStart(9, '0');
    return text.slice(0, digits);
  };
  const mintAmount = (token: number): string => {
    const decimals = tokens[token]?.decimals ?? 6;
    const units = rng.int(1, 99_999);
    const scale = Math.max(0, decimals - rng.int(0, 4));
    return (BigInt(units) * 10n ** BigInt(scale)).toString();
  };
  const share = (balance: bigint): bigint => (balance * BigInt(rng.int(1, 600))) / 1000n;

  const mint = (token: number, to: number, arrivedAtMs: number, nonce: number): NewRecord => {
    // Enormous mints go to a fresh account that is never picked as a sender, so a 78-digit
    // balance does not spread into every later transfer and swamp the volumes of reports.
    const enormous = tokens[token]?.decimals === 18 && rng.chance(0.002);
    const receiver = enormous ? table.account(inventAccount(rng, keys)) : to;
    return {
      action: MINT,
      token,
      from: receiver,
      to: receiver,
      amount: enormous ? enormousAmount() : mintAmount(token),
      nonce,
      arrivedAtMs,
      extra: { targetChain: rng.pick(tokens[token]?.chains ?? ['ethereum']) },
    };
  };

  const spend = (action: number, token: number, from: number, extra?: RecordExtra): bigint | null => {
    const fee = BigInt(book.fee(action, token, extra?.targetChain));
    const available = book.balance(from, token) - fee;
    if (available <= 0n) return null;
    const amount = share(available);
    return amount > 0n ? amount : null;
  };

  const bundle = (from: number, arrivedAtMs: number, nonce: number): NewRecord | null => {
    const items: BundleItem[] = [];
    const count = rng.int(2, 3);
    const spentBy = new Map<number, bigint>();
    for (let i = 0; i < count; i++) {
      const token = pickToken();
      const itemFrom = i === 0 ? from : pickAccount();
      const key = itemFrom * 8 + token;
      const available = book.balance(itemFrom, token) - (spentBy.get(key) ?? 0n);
      if (available <= 0n) continue;
      const amount = share(available);
      if (amount <= 0n) continue;
      spentBy.set(key, (spentBy.get(key) ?? 0n) + amount);
      items.push({ token, from: itemFrom, to: pickAccount(), amount: amount.toString() });
    }
    if (items.length < 2) return null;
    const failed = rng.chance(0.1);
    const firstToken = items[0]?.token ?? 0;
    if (BigInt(book.fee(BUNDLE, firstToken)) > book.balance(from, firstToken)) return null;
    return {
      action: BUNDLE,
      token: firstToken,
      from,
      to: from,
      amount: '0',
      nonce,
      arrivedAtMs,
      extra: {
        bundle: {
          items,
          failIndex: failed ? rng.int(-1, items.length - 1) : null,
          failMsg: rng.pick(BUNDLE_FAIL_MESSAGES),
        },
      },
    };
  };

  const choose = (arrivedAtMs: number, nonce: number): NewRecord => {
    const r = rng.next();
    const token = pickToken();
    const from = pickAccount();
    if (r < 0.18) return mint(token, freshAccount(), arrivedAtMs, nonce);
    if (r < 0.72) {
      const express = rng.chance(0.03) && (tokens[token]?.chainType ?? '').includes('ethereum');
      const amount = spend(TRANSFER, token, from);
      if (amount === null) return mint(token, from, arrivedAtMs, nonce);
      const to = express ? init.marketMaker : freshAccount();
      return {
        action: TRANSFER,
        token,
        from,
        to,
        amount: amount.toString(),
        nonce,
        arrivedAtMs,
        ...(express ? { extra: { express: true } } : {}),
      };
    }
    if (r < 0.86) {
      const extra: RecordExtra = { targetChain: rng.pick(tokens[token]?.chains ?? ['ethereum']) };
      const amount = spend(BURN, token, from, extra);
      if (amount === null) return mint(token, from, arrivedAtMs, nonce);
      return {
        action: BURN,
        token,
        from,
        to: pickAccount(),
        amount: amount.toString(),
        nonce,
        arrivedAtMs,
        extra,
      };
    }
    if (r < 0.995) return bundle(from, arrivedAtMs, nonce) ?? mint(token, from, arrivedAtMs, nonce);
    return { action: SET, token, from: init.owner, to: init.owner, amount: '0', nonce, arrivedAtMs };
  };

  return {
    next(arrivedAtMs, nonceBase) {
      const record = choose(arrivedAtMs, nonceBase - rng.int(0, 4000));
      book.apply(record);
      return record;
    },
  };
}

export type { Rng };
