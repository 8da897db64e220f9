import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { keccak_256 } from '@noble/hashes/sha3.js';
import { keccak256, loadFastKeccak } from '../../src/domain/keccak.js';

const hex = (bytes: Uint8Array) => Buffer.from(bytes).toString('hex');

describe('keccak256', () => {
  it('gives the known digest of the empty input and of "abc", before and after the WebAssembly one loads', async () => {
    const vectors: Array<[string, string]> = [
      ['', 'c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470'],
      ['abc', '4e03657aea45a94fc7d47ba826c8d667c0d1e6e33a64a036ec44f58fa12d6c45'],
    ];
    const check = () => {
      for (const [input, digest] of vectors) assert.equal(hex(keccak256(Buffer.from(input))), digest);
    };
    check();
    await loadFastKeccak();
    check();
  });

  it('agrees with noble on inputs of every length around the rate (136 bytes)', async () => {
    await loadFastKeccak();
    for (const length of [1, 31, 32, 135, 136, 137, 271, 272, 273, 600, 4096]) {
      const input = randomBytes(length);
      assert.equal(hex(keccak256(input)), hex(keccak_256(input)), `length ${length}`);
    }
  });
});
