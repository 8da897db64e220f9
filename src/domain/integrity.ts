/**
 * Proof that a mirrored record is the one its sender signed: `ledgerHash` recomputed from the
 * signed fields, and for EVM senders the signature recovered to `from`. Pure functions over a
 * record; a mismatch is a finding to store and report, never a reason to drop the record.
 */
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { keccak256 } from './keccak.js';
import type { LedgerTx } from './model.js';

/** The 13 signed fields, in the order the signed message lists them. */
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
] as const satisfies readonly (keyof LedgerTx)[];

export type SignedField = (typeof SIGNED_FIELDS)[number];

/**
 * The `version` a record without one was signed with. The service's published records that
 * lack `version` verify only with `version:v1`. An empty `version` is read the same way: the
 * record parser turns an absent field into `""`, so the two cannot be told apart, and no
 * published record signed with an empty version is known.
 */
export const UNVERSIONED_SIGNED_VERSION = 'v1';

/**
 * What a check concluded: `ok` (it holds), `mismatch` (it fails: the record is not what was
 * signed), or `unknown` (it cannot be checked: a field is missing, or the sender's account
 * kind has no check here).
 */
export type IntegrityOutcome = 'ok' | 'mismatch' | 'unknown';

/** Both checks of one record. */
export interface IntegrityResult {
  /** `ledgerHash` against the hash recomputed from the signed fields. */
  hash: IntegrityOutcome;
  /** `sig` recovered to `from` (EVM senders only; other account kinds are `unknown`). */
  signature: IntegrityOutcome;
}

/**
 * The fields the checks read. A {@link LedgerTx} has them all; a missing (`undefined` or
 * `null`) field makes the checks that need it `unknown`.
 */
export type SignedRecord = {
  readonly [K in SignedField | 'ledgerHash' | 'sig']?: string | number | null | undefined;
};

const EVM_ADDRESS = /^0x[0-9a-fA-F]{40}$/;
/** r (32 bytes), s (32 bytes) and v (1 byte) as hex, with or without `0x`. */
const SIGNATURE_HEX = /^(?:0x)?([0-9a-fA-F]{128})([0-9a-fA-F]{2})$/;

/** Whether an account id is an EVM address (`0x` and 40 hex digits, any case). */
export function isEvmAddress(account: string): boolean {
  return EVM_ADDRESS.test(account);
}

/**
 * The text the sender signed: the 13 fields as `key:value` lines joined with `\n`, `version:v1`
 * where the record has no version. Undefined when another signed field is missing.
 */
export function signedMessage(tx: SignedRecord): string | undefined {
  // Concatenated rather than joined from an array of lines: this runs for every record written.
  let message = '';
  for (let index = 0; index < SIGNED_FIELDS.length; index++) {
    const field = SIGNED_FIELDS[index]!;
    let value = tx[field];
    if (field === 'version' && (value === undefined || value === null || value === '')) {
      value = UNVERSIONED_SIGNED_VERSION;
    }
    if (value === undefined || value === null) return undefined;
    message = index === 0 ? `${field}:${value}` : `${message}\n${field}:${value}`;
  }
  return message;
}

/** The bytes of the message being hashed: reused by every record (the hash runs for each one written). */
let scratch = Buffer.allocUnsafe(4096);

/** `\x19Ethereum Signed Message:\n`: the prefix before the message's byte length. */
const PREFIX = '\x19Ethereum Signed Message:\n';
/** Where the message starts in {@link scratch}: room before it for the prefix and up to 20 digits of length. */
const MESSAGE_START = PREFIX.length + 20;

/** The EIP-191 personal-message hash: keccak256 of `"\x19Ethereum Signed Message:\n" + byteLength + message`. */
export function personalMessageDigest(message: string): Uint8Array {
  // The message is written at a fixed offset with room for any UTF-8 length, then the prefix just
  // before it: one pass over the message, no separate byte count.
  const room = MESSAGE_START + 3 * message.length;
  if (scratch.length < room) scratch = Buffer.allocUnsafe(2 * room);
  const end = MESSAGE_START + scratch.write(message, MESSAGE_START, 'utf8');
  const prefix = PREFIX + (end - MESSAGE_START);
  const start = MESSAGE_START - prefix.length;
  scratch.write(prefix, start, 'latin1');
  return keccak256(scratch.subarray(start, end));
}

/** The `ledgerHash` the record should carry (`0x` and lower-case hex); undefined when a signed field is missing. */
export function recomputeLedgerHash(tx: SignedRecord): string | undefined {
  const message = signedMessage(tx);
  return message === undefined ? undefined : toHex(personalMessageDigest(message));
}

/** Whether the record's `ledgerHash` is the hash of its signed fields (hex compared in any case). */
export function checkHash(tx: SignedRecord): IntegrityOutcome {
  const message = signedMessage(tx);
  if (message === undefined) return 'unknown';
  return hashOutcome(tx, personalMessageDigest(message));
}

/** Whether the record's `sig` over its signed fields recovers to `from` (EVM senders only). */
export function checkSignature(tx: SignedRecord): IntegrityOutcome {
  const message = signedMessage(tx);
  if (message === undefined) return 'unknown';
  return signatureOutcome(tx, personalMessageDigest(message));
}

/**
 * Both checks, hashing the message once. With `signatures: false` the signature is not
 * recovered (it costs far more than the hash) and its outcome is `unknown`.
 */
export function checkIntegrity(tx: SignedRecord, options: { signatures?: boolean } = {}): IntegrityResult {
  const message = signedMessage(tx);
  if (message === undefined) return { hash: 'unknown', signature: 'unknown' };
  const digest = personalMessageDigest(message);
  return {
    hash: hashOutcome(tx, digest),
    signature: options.signatures === false ? 'unknown' : signatureOutcome(tx, digest),
  };
}

/**
 * The EVM address (`0x` and lower-case hex) that signed `digest` with `sig` (r, s, v as 65 bytes
 * of hex; v 27/28 or 0/1). Undefined when `sig` is not such a signature or recovers to no key.
 */
export function recoverSigner(digest: Uint8Array, sig: string): string | undefined {
  const parts = SIGNATURE_HEX.exec(sig);
  if (!parts) return undefined;
  const v = Number.parseInt(parts[2]!, 16);
  const recovery = v >= 27 ? v - 27 : v;
  if (recovery !== 0 && recovery !== 1) return undefined;
  try {
    const signature = secp256k1.Signature.fromHex(parts[1]!, 'compact').addRecoveryBit(recovery);
    const publicKey = signature.recoverPublicKey(digest).toBytes(false);
    return addressOfPublicKey(publicKey);
  } catch {
    // r or s out of range, or no point for r: not a signature of anyone.
    return undefined;
  }
}

/** The EVM address (lower case) of an uncompressed public key (65 bytes, `04` first). */
export function addressOfPublicKey(publicKey: Uint8Array): string {
  return toHex(keccak256(publicKey.subarray(1)).subarray(12));
}

function hashOutcome(tx: SignedRecord, digest: Uint8Array): IntegrityOutcome {
  const ledgerHash = tx.ledgerHash;
  if (typeof ledgerHash !== 'string') return 'unknown';
  if (spellsDigest(ledgerHash, digest)) return 'ok';
  return ledgerHash.toLowerCase() === toHex(digest) ? 'ok' : 'mismatch';
}

/**
 * Whether `text` is `0x` and the digest's hex in any case, read without building a string: a
 * true answer is what the exact comparison would say; anything else is left to it.
 */
function spellsDigest(text: string, digest: Uint8Array): boolean {
  if (text.length !== 2 + 2 * digest.length) return false;
  if (text.charCodeAt(0) !== 48 || (text.charCodeAt(1) | 0x20) !== 120) return false;
  for (let i = 0; i < digest.length; i++) {
    const byte = digest[i]!;
    if (hexValue(text.charCodeAt(2 + 2 * i)) !== byte >> 4) return false;
    if (hexValue(text.charCodeAt(3 + 2 * i)) !== (byte & 15)) return false;
  }
  return true;
}

/** The value of a hex digit's character code (either case); -1 for any other character. */
function hexValue(code: number): number {
  if (code >= 48 && code <= 57) return code - 48;
  const lower = code | 0x20;
  return lower >= 97 && lower <= 102 ? lower - 87 : -1;
}

function signatureOutcome(tx: SignedRecord, digest: Uint8Array): IntegrityOutcome {
  const from = tx.from;
  if (typeof from !== 'string' || !isEvmAddress(from) || typeof tx.sig !== 'string') return 'unknown';
  return recoverSigner(digest, tx.sig) === from.toLowerCase() ? 'ok' : 'mismatch';
}

function toHex(bytes: Uint8Array): string {
  return `0x${Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('hex')}`;
}
