import { checksumAddress } from './evm.js';
import type { EvmKeyring } from './evm-keys.js';
import { createRng, type Rng, randomBytes } from './random.js';

/** A token the simulated service knows, with its fee schedule. */
export interface TokenDef {
  tag: string;
  symbol: string;
  decimals: number;
  chainType: string;
  chainID: string;
  id: string;
  /** Spellings of the symbol senders use (`AR` and `ar`), most common first. */
  symbolSpellings: string[];
  /** Spellings of the token id senders use (checksum and lower case EVM ids), most common first. */
  idSpellings: string[];
  transferFee: string;
  bundleFee: string;
  burnFeeMap: Record<string, string>;
  /** Relative share of records in this token. */
  weight: number;
  /** Chain type a mint of this token comes from or a burn goes to. */
  chains: string[];
}

/** Builds a tag by the service's rule: lower(chainType)-lower(symbol)-id, EVM ids lower-cased. */
export function tokenTag(chainType: string, symbol: string, id: string): string {
  const ids = id
    .split(',')
    .map((part) => (/^0x[0-9a-fA-F]{40}$/.test(part) ? part.toLowerCase() : part))
    .join(',');
  return `${chainType.toLowerCase()}-${symbol.toLowerCase()}-${ids}`;
}

function token(init: Omit<TokenDef, 'tag' | 'symbolSpellings' | 'idSpellings'>): TokenDef {
  const evmSpellings = (id: string): string[] => {
    const parts = id.split(',');
    const lower = parts.map((p) => (p.startsWith('0x') ? p.toLowerCase() : p)).join(',');
    const checksum = parts.map((p) => (p.startsWith('0x') ? checksumAddress(p) : p)).join(',');
    return checksum === lower ? [lower] : [lower, checksum];
  };
  return {
    ...init,
    tag: tokenTag(init.chainType, init.symbol, init.id),
    symbolSpellings: [init.symbol, init.symbol.toLowerCase()],
    idSpellings: evmSpellings(init.id),
  };
}

/** The token list: decimals 6, 12 and 18, and one token living on two chains. */
export function createTokens(): TokenDef[] {
  return [
    token({
      symbol: 'AR',
      decimals: 12,
      chainType: 'arweave,ethereum',
      chainID: '0,1',
      id: 'AR,0xcc9141efa8c20c7df0778748255b1487957811be',
      transferFee: '0',
      bundleFee: '0',
      burnFeeMap: { arweave: '2000000000', ethereum: '5000000000' },
      weight: 30,
      chains: ['arweave', 'ethereum'],
    }),
    token({
      symbol: 'USDT',
      decimals: 6,
      chainType: 'ethereum',
      chainID: '1',
      id: '0xdac17f958d2ee523a2206206994597c13d831ec7',
      transferFee: '0',
      bundleFee: '0',
      burnFeeMap: { ethereum: '5000000' },
      weight: 25,
      chains: ['ethereum'],
    }),
    token({
      symbol: 'ETH',
      decimals: 18,
      chainType: 'ethereum',
      chainID: '1',
      id: '0x0000000000000000000000000000000000000000',
      transferFee: '0',
      bundleFee: '0',
      burnFeeMap: { ethereum: '1500000000000000' },
      weight: 20,
      chains: ['ethereum'],
    }),
    token({
      symbol: 'USDC',
      decimals: 6,
      chainType: 'ethereum',
      chainID: '1',
      id: '0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
      transferFee: '10000',
      bundleFee: '10000',
      burnFeeMap: { ethereum: '4000000' },
      weight: 15,
      chains: ['ethereum'],
    }),
    token({
      symbol: 'BNB',
      decimals: 18,
      chainType: 'bsc',
      chainID: '56',
      id: '0x0000000000000000000000000000000000000000',
      transferFee: '0',
      bundleFee: '0',
      burnFeeMap: { bsc: '300000000000000' },
      weight: 10,
      chains: ['bsc'],
    }),
  ];
}

/** Whether an account id is an EVM address (compared case-insensitively by the service). */
export function isEvmAccount(account: string): boolean {
  return /^0x[0-9a-fA-F]{40}$/.test(account);
}

/** The key under which an account is looked up: EVM addresses lower-cased, others as they are. */
export function accountKey(account: string): string {
  return isEvmAccount(account) ? account.toLowerCase() : account;
}

function base64url(bytes: Uint8Array): string {
  return Buffer.from(bytes).toString('base64url');
}

/** Invents one account: EVM (checksum form, its key in `keys`), Arweave (base64url) or `eid…`. */
export function inventAccount(rng: Rng, keys: EvmKeyring): string {
  const r = rng.next();
  if (r < 0.6) return keys.newAccount();
  if (r < 0.95) return base64url(randomBytes(rng, 32));
  return `eid${rng.hex(20)}`;
}

/** The fixed accounts of a data set: fee recipient, express market maker, lockers, token owner. */
export interface WellKnownAccounts {
  feeRecipient: string;
  marketMaker: string;
  owner: string;
  lockers: Record<string, string>;
}

/** The fixed accounts; those that send records (the token owner…) have their keys in `keys`. */
export function createWellKnownAccounts(seed: number, keys: EvmKeyring): WellKnownAccounts {
  const rng = createRng(seed, 0x5eed);
  return {
    feeRecipient: keys.newAccount(),
    marketMaker: keys.newAccount(),
    owner: keys.newAccount(),
    lockers: {
      arweave: base64url(randomBytes(rng, 32)),
      ethereum: checksumAddress(rng.hex(20)),
      bsc: checksumAddress(rng.hex(20)),
    },
  };
}

/** Encodes bytes as the chain's usual transaction-hash text. */
export function chainHashText(chain: string, bytes: Uint8Array): string {
  if (chain === 'arweave') return base64url(bytes);
  return `0x${Buffer.from(bytes).toString('hex')}`;
}

/** Decodes a chain transaction hash written by {@link chainHashText}; undefined when it is neither form. */
export function chainHashBytes(text: string): Uint8Array | undefined {
  if (/^0x[0-9a-fA-F]{64}$/.test(text)) return Buffer.from(text.slice(2), 'hex');
  if (/^[A-Za-z0-9_-]{43}$/.test(text)) return Buffer.from(text, 'base64url');
  return undefined;
}
