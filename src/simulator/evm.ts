/**
 * Keccak-256 (the pre-standard padding Ethereum uses; Node's `sha3-256` is the other one).
 * Needed for EIP-55 checksum addresses and EIP-191 ledger hashes.
 */

const ROTATIONS = [
  0, 1, 62, 28, 27, 36, 44, 6, 55, 20, 3, 10, 43, 25, 39, 41, 45, 15, 21, 8, 18, 2, 61, 56, 14,
];
const ROUND_CONSTANTS = [
  [0x00000001, 0x00000000],
  [0x00008082, 0x00000000],
  [0x0000808a, 0x80000000],
  [0x80008000, 0x80000000],
  [0x0000808b, 0x00000000],
  [0x80000001, 0x00000000],
  [0x80008081, 0x80000000],
  [0x00008009, 0x80000000],
  [0x0000008a, 0x00000000],
  [0x00000088, 0x00000000],
  [0x80008009, 0x00000000],
  [0x8000000a, 0x00000000],
  [0x8000808b, 0x00000000],
  [0x0000008b, 0x80000000],
  [0x00008089, 0x80000000],
  [0x00008003, 0x80000000],
  [0x00008002, 0x80000000],
  [0x00000080, 0x80000000],
  [0x0000800a, 0x00000000],
  [0x8000000a, 0x80000000],
  [0x80008081, 0x80000000],
  [0x00008080, 0x80000000],
  [0x80000001, 0x00000000],
  [0x80008008, 0x80000000],
] as const;

const RATE = 136;

function permute(s: Uint32Array): void {
  const c = new Uint32Array(10);
  const b = new Uint32Array(50);
  for (const [rcLo, rcHi] of ROUND_CONSTANTS) {
    for (let x = 0; x < 5; x++) {
      c[2 * x] = s[2 * x]! ^ s[2 * x + 10]! ^ s[2 * x + 20]! ^ s[2 * x + 30]! ^ s[2 * x + 40]!;
      c[2 * x + 1] = s[2 * x + 1]! ^ s[2 * x + 11]! ^ s[2 * x + 21]! ^ s[2 * x + 31]! ^ s[2 * x + 41]!;
    }
    for (let x = 0; x < 5; x++) {
      const px = (x + 4) % 5;
      const nx = (x + 1) % 5;
      const nLo = c[2 * nx]!;
      const nHi = c[2 * nx + 1]!;
      const dLo = c[2 * px]! ^ ((nLo << 1) | (nHi >>> 31));
      const dHi = c[2 * px + 1]! ^ ((nHi << 1) | (nLo >>> 31));
      for (let y = 0; y < 25; y += 5) {
        s[2 * (x + y)] = s[2 * (x + y)]! ^ dLo;
        s[2 * (x + y) + 1] = s[2 * (x + y) + 1]! ^ dHi;
      }
    }
    for (let x = 0; x < 5; x++) {
      for (let y = 0; y < 5; y++) {
        const i = x + 5 * y;
        const lo = s[2 * i]!;
        const hi = s[2 * i + 1]!;
        const n = ROTATIONS[i]!;
        let rLo: number;
        let rHi: number;
        if (n === 0) {
          rLo = lo;
          rHi = hi;
        } else if (n < 32) {
          rLo = (lo << n) | (hi >>> (32 - n));
          rHi = (hi << n) | (lo >>> (32 - n));
        } else if (n === 32) {
          rLo = hi;
          rHi = lo;
        } else {
          const m = n - 32;
          rLo = (hi << m) | (lo >>> (32 - m));
          rHi = (lo << m) | (hi >>> (32 - m));
        }
        const j = y + 5 * ((2 * x + 3 * y) % 5);
        b[2 * j] = rLo;
        b[2 * j + 1] = rHi;
      }
    }
    for (let y = 0; y < 25; y += 5) {
      for (let x = 0; x < 5; x++) {
        const i = x + y;
        const i1 = ((x + 1) % 5) + y;
        const i2 = ((x + 2) % 5) + y;
        s[2 * i] = b[2 * i]! ^ (~b[2 * i1]! & b[2 * i2]!);
        s[2 * i + 1] = b[2 * i + 1]! ^ (~b[2 * i1 + 1]! & b[2 * i2 + 1]!);
      }
    }
    s[0] = s[0]! ^ rcLo;
    s[1] = s[1]! ^ rcHi;
  }
}

/** Keccak-256 of `input` (text is hashed as UTF-8). */
export function keccak256(input: Uint8Array | string): Uint8Array {
  const bytes = typeof input === 'string' ? new TextEncoder().encode(input) : input;
  const padded = new Uint8Array((Math.floor(bytes.length / RATE) + 1) * RATE);
  padded.set(bytes);
  padded[bytes.length] = 0x01;
  padded[padded.length - 1] = padded[padded.length - 1]! | 0x80;
  const state = new Uint32Array(50);
  const view = new DataView(padded.buffer);
  for (let offset = 0; offset < padded.length; offset += RATE) {
    for (let lane = 0; lane < RATE / 4; lane++) {
      state[lane] = state[lane]! ^ view.getUint32(offset + lane * 4, true);
    }
    permute(state);
  }
  const out = new Uint8Array(32);
  const outView = new DataView(out.buffer);
  for (let i = 0; i < 8; i++) outView.setUint32(i * 4, state[i]!, true);
  return out;
}

/** Lower-case hex of bytes, without a prefix. */
export function toHex(bytes: Uint8Array): string {
  let out = '';
  for (const byte of bytes) out += byte.toString(16).padStart(2, '0');
  return out;
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

/** The EIP-191 personal-message hash of `message`, as `0x` hex. */
export function personalMessageHash(message: string): string {
  const body = new TextEncoder().encode(message);
  const prefix = new TextEncoder().encode(`\x19Ethereum Signed Message:\n${body.length}`);
  const all = new Uint8Array(prefix.length + body.length);
  all.set(prefix);
  all.set(body, prefix.length);
  return `0x${toHex(keccak256(all))}`;
}
