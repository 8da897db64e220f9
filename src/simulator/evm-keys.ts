import { normalizeZ } from '@noble/curves/abstract/curve.js';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import { checksumAddress, keccak256, toHex } from './evm.js';

const { Point } = secp256k1;
const Fn = Point.Fn;
const N = Fn.ORDER;
/** Accounts whose public keys are computed together: one field inversion for all of them. */
const BATCH = 64;
/** Signing nonces kept ready; see {@link EvmKeyring.sign}. */
const NONCES = 16;

/** A precomputed signing nonce: k⁻¹, r = (k·G).x, and the parity of (k·G).y. */
interface Nonce {
  kInv: bigint;
  r: bigint;
  yOdd: number;
}

const numberOf = (bytes: Uint8Array): bigint => BigInt(`0x${toHex(bytes)}`);
const hex32 = (value: bigint): string => value.toString(16).padStart(64, '0');

/**
 * The secret keys of the simulated EVM accounts, derived from the seed: account j holds key
 * `base + j`. Its address is computed when the account is made (public keys in batches of
 * consecutive points, so a million-record data set starts in seconds); signatures are made
 * when a record is rendered.
 */
export class EvmKeyring {
  private readonly base: bigint;
  private readonly seed: number;
  private made = 0;
  /** Public point of the last key computed ahead. */
  private last: InstanceType<typeof Point> | undefined;
  private readonly ahead: string[] = [];
  private aheadHead = 0;
  private readonly keyNumbers = new Map<string, number>();
  private nonces: Nonce[] | undefined;

  constructor(seed: number) {
    this.seed = seed;
    this.base = (numberOf(keccak256(`simulated account keys ${seed}`)) % (N - 1n)) + 1n;
  }

  /** Makes the next account: returns its checksum address; the keyring keeps its key. */
  newAccount(): string {
    if (this.aheadHead === this.ahead.length) this.computeAhead();
    const address = this.ahead[this.aheadHead++]!;
    this.keyNumbers.set(address.toLowerCase(), this.made++);
    return address;
  }

  /** Whether the keyring holds the key of `address` (any case). */
  holds(address: string): boolean {
    return this.keyNumbers.has(address.toLowerCase());
  }

  /** The secret key of `address`, or undefined when the keyring does not hold it (for tests). */
  secretKeyOf(address: string): bigint | undefined {
    const j = this.keyNumbers.get(address.toLowerCase());
    return j === undefined ? undefined : Fn.create(this.base + BigInt(j));
  }

  /**
   * Signs a 32-byte digest as `address` does with `personal_sign`: `0x` r‖s‖v (v 27/28, low s).
   * Undefined when the keyring does not hold the key.
   *
   * The nonce k comes from a small precomputed pool instead of being derived per message, so a
   * signature costs a few modular multiplications rather than a curve multiplication (about a
   * hundred times less). Reusing k would expose a real key; these keys are public by design
   * (derived from the seed) and the signatures are valid all the same.
   */
  sign(address: string, digest: Uint8Array): string | undefined {
    const d = this.secretKeyOf(address);
    if (d === undefined) return undefined;
    const nonces = this.nonceTable();
    const { kInv, r, yOdd } = nonces[digest[digest.length - 1]! % nonces.length]!;
    let s = Fn.mul(kInv, Fn.add(Fn.create(numberOf(digest)), Fn.mul(r, d)));
    let recovery = yOdd;
    if (s > N >> 1n) {
      s = Fn.neg(s);
      recovery ^= 1;
    }
    return `0x${hex32(r)}${hex32(s)}${(27 + recovery).toString(16)}`;
  }

  private computeAhead(): void {
    const points: InstanceType<typeof Point>[] = [];
    let point = this.last;
    for (let i = 0; i < BATCH; i++) {
      point = point === undefined ? Point.BASE.multiply(this.base) : point.add(Point.BASE);
      points.push(point);
    }
    this.last = point;
    this.ahead.splice(0, this.aheadHead);
    this.aheadHead = 0;
    for (const affine of normalizeZ(Point, points)) {
      const publicKey = affine.toBytes(false);
      this.ahead.push(checksumAddress(toHex(keccak256(publicKey.subarray(1)).subarray(12))));
    }
  }

  private nonceTable(): Nonce[] {
    if (this.nonces) return this.nonces;
    const nonces: Nonce[] = [];
    for (let i = 0; nonces.length < NONCES; i++) {
      const k = (numberOf(keccak256(`simulated signing nonce ${this.seed} ${i}`)) % (N - 1n)) + 1n;
      const R = Point.BASE.multiply(k).toAffine();
      // r must be R.x itself for the recovery bit to name R (true but for ~2^-128 of nonces).
      if (R.x >= N) continue;
      nonces.push({ kInv: Fn.inv(k), r: R.x, yOdd: Number(R.y & 1n) });
    }
    this.nonces = nonces;
    return nonces;
  }
}
