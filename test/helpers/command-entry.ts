import { join } from 'node:path';
import { firstLineFlags } from '../../bench/indexer-runner.js';
import { packageRoot } from '../../src/paths.js';

/** The bundled command, package.json's `bin`: `test/run.mjs` bundles the sources before any test starts. */
const bin = join(packageRoot, 'dist', 'cli', 'ledger-indexer.js');

/**
 * Node arguments that run `ledger-indexer` as installed: the bundle, with the node flags of its
 * first line. A process started from it loads in a fifth of the CPU the TypeScript sources
 * through tsx take (0.4 s against 1.6-1.9 s for a `sync`), which the tests pay hundreds of times.
 */
export const COMMAND_ENTRY = [...firstLineFlags(bin), bin];
