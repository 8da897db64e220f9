/**
 * Seeded, fast pseudo-randomness. Everything the simulator invents is a pure function of the
 * seed and a position (a record's rawId, a batch number…), so the same seed gives the same data.
 */

function mix(h: number, part: number): number {
  // Split doubles above 2^32 so large positions still mix fully.
  const lo = part >>> 0;
  const hi = Math.floor(part / 0x100000000) >>> 0;
  let x = Math.imul(h ^ lo, 0x85ebca6b);
  x = (x << 13) | (x >>> 19);
  x = Math.imul(x ^ hi, 0xc2b2ae35);
  return x ^ (x >>> 16);
}

function finish(h: number): number {
  let x = h ^ (h >>> 16);
  x = Math.imul(x, 0x85ebca6b);
  x ^= x >>> 13;
  x = Math.imul(x, 0xc2b2ae35);
  x ^= x >>> 16;
  return x >>> 0;
}

function hashList(first: number, parts: readonly number[]): number {
  let h = mix(0x9e3779b9, first);
  for (let i = 0; i < parts.length; i++) h = mix(h, parts[i]!);
  return finish(h);
}

/** Mixes any number of 32-bit integers into one well-spread 32-bit hash (murmur3 finaliser). */
export function hash32(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (let i = 0; i < parts.length; i++) h = mix(h, parts[i]!);
  return finish(h);
}

/** A small deterministic random source (sfc32). */
export interface Rng {
  /** 32 random bits as an unsigned integer. */
  u32(): number;
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max] inclusive. */
  int(min: number, max: number): number;
  /** True with probability `p`. */
  chance(p: number): boolean;
  /** `bytes` random bytes as lower-case hex. */
  hex(bytes: number): string;
  /** One element of `items`. */
  pick<T>(items: readonly T[]): T;
}

const SCRATCH = Buffer.alloc(1028);
// Byte order of the words follows the platform; every supported one (x64, arm64) is little-endian.
const SCRATCH_WORDS = new Uint32Array(SCRATCH.buffer, SCRATCH.byteOffset, 257);

/** sfc32 as a class: methods live on the prototype, so making one per record stays cheap. */
class Sfc32 implements Rng {
  private a: number;
  private b: number;
  private c: number;
  private d = 1;

  constructor(parts: readonly number[]) {
    this.a = hashList(1, parts);
    this.b = hashList(2, parts);
    this.c = hashList(3, parts);
    for (let i = 0; i < 8; i++) this.u32();
  }

  u32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = (this.c << 21) | (this.c >>> 11);
    this.c = (this.c + t) | 0;
    return t >>> 0;
  }

  next(): number {
    return this.u32() / 0x100000000;
  }

  int(min: number, max: number): number {
    return min + Math.floor(this.next() * (max - min + 1));
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  hex(bytes: number): string {
    // Native hex encoding gives one flat string; building it by pieces would make a rope.
    for (let i = 0; i < bytes; i += 4) SCRATCH_WORDS[i >>> 2] = this.u32();
    return SCRATCH.toString('hex', 0, bytes);
  }

  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.next() * items.length)];
    if (item === undefined) throw new Error('pick from an empty list');
    return item;
  }
}

/** Creates a random source whose stream is fully determined by `parts`. */
export function createRng(...parts: number[]): Rng {
  return new Sfc32(parts);
}

/** Turns a seed given as text or number into the 32-bit number the generators use. */
export function seedNumber(seed: number | string): number {
  if (typeof seed === 'number' && Number.isInteger(seed)) return seed >>> 0;
  let h = 0;
  for (const ch of String(seed)) h = hash32(h, ch.codePointAt(0) ?? 0);
  return h;
}

/** `bytes` random bytes from `rng`. */
export function randomBytes(rng: Rng, bytes: number): Uint8Array {
  const out = new Uint8Array(bytes);
  for (let i = 0; i < bytes; i += 4) {
    const word = rng.u32();
    for (let j = 0; j < 4 && i + j < bytes; j++) out[i + j] = (word >>> (8 * j)) & 0xff;
  }
  return out;
}
