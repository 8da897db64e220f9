/**
 * What the integrity checks cost, in one run: CPU per record of the hash check and of the
 * signature recovery (in-process, over simulator records), and a `sync` backfill with
 * `--check-signatures` against one without, on the same simulator.
 */
import { join } from 'node:path';
import { checkHash, checkSignature, isEvmAddress, type SignedRecord } from '../src/domain/integrity.js';
import { loadFastKeccak } from '../src/domain/keccak.js';
import { createSimulator } from '../src/simulator/simulator.js';
import { type BenchContext, freshDatabase, usingDatabase } from './context.js';
import { round, type ThroughputRun } from './figures.js';
import { runHttpCeiling } from './http-ceiling.js';
import { runIndexerSync } from './indexer-sync.js';
import { simulatorBase } from './options.js';
import { startSimulatorProcess } from './simulator-process.js';

export interface IntegrityFigures {
  /** Records of the backfills compared. */
  records: number;
  /** CPU per record of the recomputed `ledgerHash` (keccak in WebAssembly, as the indexer runs it), µs. */
  hashCpuUsPerRecord: number;
  /** CPU per EVM sender's record of the signature recovery (hash included), µs. */
  signatureCpuUsPerEvmRecord: number;
  /** Share of the records whose sender is an EVM account (the ones a signature check recovers). */
  evmShare: number;
  /** `sync` backfill as it runs by default (hash checked). */
  plain: ThroughputRun;
  /** The same with `--check-signatures`. */
  signatures: ThroughputRun;
  /** Hash CPU per record ÷ the plain backfill's indexer CPU per record. */
  hashShareOfSyncCpu: number | null;
  /** Rows/s with signatures ÷ rows/s without. */
  signaturesVsPlain: number;
}

/**
 * CPU µs per item of `check` over `items`, in the steady state a backfill runs in: one pass to
 * warm up (the optimising compiler takes some thousands of calls), then three measured.
 */
function cpuPerItem(items: readonly SignedRecord[], check: (r: SignedRecord) => string): number {
  const passes = 3;
  for (const item of items) check(item);
  const before = process.cpuUsage();
  for (let pass = 0; pass < passes; pass++) for (const item of items) check(item);
  const used = process.cpuUsage(before);
  return round((used.user + used.system) / (passes * items.length), 1);
}

export async function runIntegrityScenario(context: BenchContext): Promise<IntegrityFigures> {
  const { options, setup } = context;
  const records = Math.min(options.records, options.quick ? 500 : 20_000);
  const sample = [...createSimulator({ records: Math.min(records, 4000), seed: options.seed }).records()];
  await loadFastKeccak();
  const evm = sample.filter((r) => typeof r.from === 'string' && isEvmAddress(r.from));
  const hashCpuUsPerRecord = cpuPerItem(sample, checkHash);
  const signatureCpuUsPerEvmRecord = cpuPerItem(evm.slice(0, 400), checkSignature);

  context.log(`integrity: simulator of ${records} records`);
  const simulator = await startSimulatorProcess(
    { records, ...simulatorBase(options), arrivalsPerSecond: 0 },
    setup.root,
  );
  try {
    const expectedRows = await simulator.dump(join(context.tmpDir, 'integrity.ndjson'));
    // Rendering cache filled first, so neither measured run pays it.
    await runHttpCeiling({ baseUrl: simulator.url, concurrency: options.concurrency, expectedRows });
    const backfill = (label: string, args: string[]) =>
      freshDatabase(context, 'integrity').then((database) =>
        usingDatabase(database, (db) =>
          runIndexerSync(setup, { label, simulator, database: db, expectedRows, extraArgs: args }),
        ),
      );
    context.log('integrity: sync backfill');
    const plain = await backfill('ledger-indexer sync (hash checked)', []);
    context.log('integrity: sync backfill with --check-signatures');
    const signatures = await backfill('ledger-indexer sync --check-signatures', ['--check-signatures']);
    const syncCpuUsPerRecord = plain.cpuMs ? (plain.cpuMs * 1000) / Math.max(1, plain.rows) : null;
    return {
      records,
      hashCpuUsPerRecord,
      signatureCpuUsPerEvmRecord,
      evmShare: round(evm.length / sample.length),
      plain,
      signatures,
      hashShareOfSyncCpu: syncCpuUsPerRecord === null ? null : round(hashCpuUsPerRecord / syncCpuUsPerRecord),
      signaturesVsPlain: round(signatures.rowsPerSecond / plain.rowsPerSecond),
    };
  } finally {
    await simulator.close();
  }
}
