/**
 * Seeded, fast pseudo-randomness. Everything the simulator invents is a pure function of the
 * seed and a position (a record's rawId, a batch number…), so the same seed gives the same data.
 */

/** Mixes any number of 32-bit integers into one well-spread 32-bit hash (murmur3 finaliser). */
export function hash32(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    // Split doubles above 2^32 so large positions still mix fully.
    const lo = part >>> 0;
    const hi = Math.floor(part / 0x100000000) >>> 0;
    h = Math.imul(h ^ lo, 0x85ebca6b);
    h = (h << 13) | (h >>> 19);
    h = Math.imul(h ^ hi, 0xc2b2ae35);
    h ^= h >>> 16;
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
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

/** Creates a random source whose stream is fully determined by `parts`. */
export function createRng(...parts: number[]): Rng {
  let a = hash32(1, ...parts);
  let b = hash32(2, ...parts);
  let c = hash32(3, ...parts);
  let d = 1;
  const u32 = (): number => {
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return t >>> 0;
  };
  for (let i = 0; i < 8; i++) u32();
  const next = (): number => u32() / 0x100000000;
  return {
    u32,
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    hex: (bytes) => {
      let out = '';
      for (let i = 0; i < bytes; i += 4) {
        const word = u32().toString(16).padStart(8, '0');
        out += i + 4 <= bytes ? word : word.slice(0, (bytes - i) * 2);
      }
      return out;
    },
    pick: (items) => {
      const item = items[Math.floor(next() * items.length)];
      if (item === undefined) throw new Error('pick from an empty list');
      return item;
    },
  };
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
