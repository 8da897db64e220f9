/**
 * The simulator in a process of its own, so the indexer (another process) and the harness never
 * share its event loop. Started by `simulator-process.ts` with the options as JSON in argv[2];
 * prints `listening <url>` and answers control messages over the IPC channel.
 */
import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import type { Simulator, SimulatorFaults, SimulatorOptions } from '../src/simulator/types.js';
import { loadCreateSimulator } from './simulator-module.js';

/** A control message from the harness. */
export type SimulatorControl =
  | { id: number; op: 'count' | 'head' | 'stats' | 'lists' | 'pause' | 'resume' | 'settle' }
  | { id: number; op: 'add'; count: number }
  | { id: number; op: 'faults'; faults: Partial<SimulatorFaults> }
  | { id: number; op: 'dump'; path: string; afterRawId?: number };

async function main(): Promise<void> {
  const options = JSON.parse(process.argv[2] ?? '{}') as SimulatorOptions;
  const createSimulator = await loadCreateSimulator();
  const simulator = createSimulator(options);
  const { url } = await simulator.listen({ host: '127.0.0.1', port: 0 });
  process.on('message', (message: SimulatorControl) => {
    handle(simulator, message).then(
      (result) => process.send?.({ id: message.id, ok: true, result }),
      (error: unknown) => process.send?.({ id: message.id, ok: false, error: String(error) }),
    );
  });
  process.on('disconnect', () => {
    simulator.close().finally(() => process.exit(0));
  });
  process.stdout.write(`listening ${url}\n`);
}

async function handle(simulator: Simulator, message: SimulatorControl): Promise<unknown> {
  switch (message.op) {
    case 'count':
      return simulator.count();
    case 'head':
      return simulator.headRawId();
    case 'stats':
      return simulator.stats();
    case 'lists':
      return simulator.listRequests();
    case 'pause':
      simulator.pauseArrivals();
      return null;
    case 'resume':
      simulator.resumeArrivals();
      return null;
    case 'settle':
      simulator.settleAll();
      return null;
    case 'add':
      return simulator.addRecords(message.count);
    case 'faults':
      return simulator.setFaults(message.faults);
    case 'dump':
      return dump(simulator, message.path, message.afterRawId);
  }
}

/** Writes the ground truth as NDJSON; returns how many records (malformed ones excluded). */
async function dump(simulator: Simulator, path: string, afterRawId: number | undefined): Promise<number> {
  const out = createWriteStream(path);
  let count = 0;
  let buffer = '';
  for (const record of simulator.records(afterRawId === undefined ? {} : { afterRawId })) {
    if (record.malformed) continue;
    buffer += `${JSON.stringify(record)}\n`;
    count += 1;
    if (buffer.length > 1 << 20) {
      if (!out.write(buffer)) await once(out, 'drain');
      buffer = '';
    }
  }
  out.end(buffer);
  await once(out, 'finish');
  return count;
}

main().catch((error: unknown) => {
  process.stderr.write(
    `simulator: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exit(1);
});
