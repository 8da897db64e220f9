/**
 * A batch script as its own program: `node script.mjs <key|page> <baseUrl> <databaseUrl>
 * <expectedRows>` runs `bench/baseline-batch-key.ts` or `bench/baseline-batch.ts` once and
 * prints its run as one JSON line. Bundled and started by `script-runner.ts`, so the script is
 * timed as a whole process, from spawn to exit, as `sync` is. Not used by the product.
 */
import { runBatchBaseline } from './baseline-batch.js';
import { runKeyBatchBaseline } from './baseline-batch-key.js';

const [dialect, baseUrl, databaseUrl, expected] = process.argv.slice(2);
if ((dialect !== 'key' && dialect !== 'page') || !baseUrl || !databaseUrl || !expected) {
  console.error('usage: script <key|page> <baseUrl> <databaseUrl> <expectedRows>');
  process.exit(2);
}
const script = dialect === 'key' ? runKeyBatchBaseline : runBatchBaseline;
const run = await script({ baseUrl, databaseUrl, expectedRows: Number(expected) });
process.stdout.write(`${JSON.stringify(run)}\n`);
