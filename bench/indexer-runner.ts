import { spawnSync } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** How the benchmark starts ledger-indexer's command line as a child process. */
export interface IndexerRunner {
  /** `dist`: the bundled CLI (`npm run build`, dist/cli); `tsx`: the TypeScript sources through tsx. */
  kind: 'dist' | 'tsx';
  /** Node arguments that run `ledger-indexer <args>`. */
  nodeArgs(args: string[]): string[];
  /** Whether the CLI has the command (its `--help` exits 0). */
  hasCommand(name: string): boolean;
}

/**
 * Builds the CLI (`npm run build`) so the measured processes run the bundle users run
 * (package.json's `bin`); falls back to tsx when the build leaves no `dist/cli/ledger-indexer.js`.
 * TypeScript emits even with type errors elsewhere in the tree, and the bundler does not
 * type-check, so a colleague's half-written file does not stop the benchmark.
 */
export function prepareIndexerRunner(root: string, prefer: 'dist' | 'tsx' = 'dist'): IndexerRunner {
  const bin = join(root, 'dist', 'cli', 'ledger-indexer.js');
  let kind: 'dist' | 'tsx' = 'tsx';
  if (prefer === 'dist') {
    const started = Date.now();
    spawnSync('npm', ['run', '--silent', 'build'], { cwd: root, stdio: 'ignore' });
    if (existsSync(bin) && statSync(bin).mtimeMs >= started - 1000) kind = 'dist';
  }
  const nodeArgs = (args: string[]): string[] =>
    kind === 'dist' ? [bin, ...args] : ['--import', 'tsx', join(root, 'src', 'cli', 'bin.ts'), ...args];
  const known = new Map<string, boolean>();
  return {
    kind,
    nodeArgs,
    hasCommand(name) {
      const cached = known.get(name);
      if (cached !== undefined) return cached;
      const result = spawnSync(process.execPath, nodeArgs([name, '--help']), {
        cwd: root,
        stdio: 'ignore',
        timeout: 30_000,
      });
      const ok = result.status === 0;
      known.set(name, ok);
      return ok;
    },
  };
}
