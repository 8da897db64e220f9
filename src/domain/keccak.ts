/**
 * keccak256 for the record checks. `@noble/hashes` computes it in JavaScript (about 25–40 µs for a
 * record's signed message); once {@link loadFastKeccak} has resolved, the same function runs in
 * WebAssembly (hash-wasm, about ten times faster), which keeps the check that every written
 * record gets cheap next to the write itself. Both give the same bytes.
 */
import { keccak_256 } from '@noble/hashes/sha3.js';
import { createKeccak, type IHasher } from 'hash-wasm';

let wasm: IHasher | undefined;
let loading: Promise<void> | undefined;

/** Loads the WebAssembly keccak once per process; until it resolves, {@link keccak256} uses noble's. */
export function loadFastKeccak(): Promise<void> {
  loading ??= createKeccak(256).then((hasher) => {
    wasm = hasher;
  });
  return loading;
}

/** keccak256 of `bytes` (32 bytes). */
export function keccak256(bytes: Uint8Array): Uint8Array {
  if (wasm === undefined) return keccak_256(bytes);
  wasm.init();
  wasm.update(bytes);
  return wasm.digest('binary');
}
