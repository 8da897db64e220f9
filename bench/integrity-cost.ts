/**
 * What the integrity checks cost per record: the recomputed ledgerHash (13-field message and
 * Keccak-256) and the secp256k1 recovery of an EVM sender's signature, over simulator records.
 *
 *   node --import tsx bench/integrity-cost.ts [--records 20000]
 */
import { parseArgs } from 'node:util';
import { checkHash, checkSignature, isEvmAddress, type SignedRecord } from '../src/domain/integrity.js';
import { loadFastKeccak } from '../src/domain/keccak.js';
import { createSimulator } from '../src/simulator/simulator.js';

const { values } = parseArgs({ options: { records: { type: 'string', default: '20000' } } });
const count = Number(values.records);
if (!Number.isInteger(count) || count < 100) throw new Error(`--records must be a whole number >= 100`);

const records: SignedRecord[] = [...createSimulator({ records: count, seed: 1 }).records()];
const evm = records.filter((r) => typeof r.from === 'string' && isEvmAddress(r.from));

function measure(label: string, items: SignedRecord[], check: (r: SignedRecord) => string): void {
  // One pass warms up the optimising compiler (some thousands of calls); three are measured.
  const passes = 3;
  for (const item of items) check(item);
  const cpu = process.cpuUsage();
  const started = performance.now();
  let ok = 0;
  for (let pass = 0; pass < passes; pass++) for (const item of items) if (check(item) === 'ok') ok++;
  ok /= passes;
  const wallUs = ((performance.now() - started) * 1000) / (passes * items.length);
  const cpuUs = process.cpuUsage(cpu).user / (passes * items.length);
  console.log(
    `${label}: ${items.length} records, ${ok} ok, ${wallUs.toFixed(1)} µs/record wall, ${cpuUs.toFixed(1)} µs/record CPU`,
  );
}

measure('ledgerHash recomputed, keccak in JavaScript (noble)', records, checkHash);
await loadFastKeccak();
measure('ledgerHash recomputed, keccak in WebAssembly (as the indexer runs it)', records, checkHash);
// checkSignature hashes the message too; the hash's share is the figure above.
measure('signature recovered (EVM senders, hash included)', evm, checkSignature);
