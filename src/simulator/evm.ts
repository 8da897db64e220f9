/**
 * The Ethereum pieces the simulated service needs: Keccak-256, EIP-55 checksum addresses, and
 * the signed message of a transaction with its EIP-191 personal-message hash.
 */
import { keccak_256 } from '@noble/hashes/sha3.js';

/** The 13 signed fields, in signing order. */
export const SIGNED_FIELDS = [
  'tokenSymbol',
  'action',
  'from',
  'to',
  'amount',
  'fee',
  'feeRecipient',
  'nonce',
  'tokenID',
  'chainType',
  'chainID',
  'data',
  'version',
] as const;

/** The signed fields of a transaction; `version` may be absent, as on old records. */
export type SignedFields = Record<Exclude<(typeof SIGNED_FIELDS)[number], 'version'>, string | number> & {
  version?: string | undefined;
};

const encoder = new TextEncoder();

/** Keccak-256 of `input` (text is hashed as UTF-8). */
export function keccak256(input: Uint8Array | string): Uint8Array {
  return keccak_256(typeof input === 'string' ? encoder.encode(input) : input);
}

/** Lower-case hex of bytes, without a prefix. */
export function toHex(bytes: Uint8Array): string {
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex');
}

/** The EIP-55 mixed-case checksum form of a 20-byte address given as hex (any case, `0x` optional). */
export function checksumAddress(address: string): string {
  const hex = address.replace(/^0x/i, '').toLowerCase();
  const hash = toHex(keccak256(hex));
  let out = '0x';
  for (let i = 0; i < hex.length; i++) {
    const ch = hex[i]!;
    out += Number.parseInt(hash[i]!, 16) >= 8 ? ch.toUpperCase() : ch;
  }
  return out;
}

/**
 * The text a sender signs: the 13 fields as `key:value` lines. A transaction without a version
 * (absent or empty) is signed as `version:v1`, as the service's old records are.
 */
export function signedMessage(tx: SignedFields): string {
  const version = tx.version || 'v1';
  return SIGNED_FIELDS.map((field) => `${field}:${field === 'version' ? version : tx[field]}`).join('\n');
}

/** The EIP-191 personal-message hash of `message` as bytes. */
export function personalMessageDigest(message: string): Uint8Array {
  const body = encoder.encode(message);
  const prefix = encoder.encode(`\x19Ethereum Signed Message:\n${body.length}`);
  const all = new Uint8Array(prefix.length + body.length);
  all.set(prefix);
  all.set(body, prefix.length);
  return keccak_256(all);
}

/** The EIP-191 personal-message hash of `message`, as `0x` hex. */
export function personalMessageHash(message: string): string {
  return `0x${toHex(personalMessageDigest(message))}`;
}
