import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
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
 * Bundles the CLI (`npm run bundle`) so the measured processes run the bundle users run
 * (package.json's `bin`); falls back to tsx when the bundle is missing after it. A bundle newer
 * than every source is used as it is: the test runner bundles before the tests, and the smoke
 * run must not rewrite dist/cli while other tests start it. The bundler does not type-check,
 * so a colleague's half-written file does not stop the benchmark.
 */
export function prepareIndexerRunner(root: string, prefer: 'dist' | 'tsx' = 'dist'): IndexerRunner {
  const bin = join(root, 'dist', 'cli', 'ledger-indexer.js');
  let kind: 'dist' | 'tsx' = 'tsx';
  if (prefer === 'dist') {
    if (!isFresh(bin, root)) spawnSync('npm', ['run', '--silent', 'bundle'], { cwd: root, stdio: 'ignore' });
    if (isFresh(bin, root)) kind = 'dist';
  }
  const source = join(root, 'src', 'cli', 'bin.ts');
  // The node flags the command's first line gives it, as `npx ledger-indexer` runs it.
  const flags = firstLineFlags(kind === 'dist' ? bin : source);
  const nodeArgs = (args: string[]): string[] =>
    kind === 'dist' ? [...flags, bin, ...args] : [...flags, '--import', 'tsx', source, ...args];
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

/** The node flags of a script's first line (`#!/usr/bin/env -S node <flags>`); none for another. */
export function firstLineFlags(file: string): string[] {
  const first = readFileSync(file, 'utf8').split('\n', 1)[0] ?? '';
  const flags = /^#!\/usr\/bin\/env -S node\s+(.*)$/.exec(first)?.[1] ?? '';
  return flags.split(/\s+/).filter(Boolean);
}

/** Whether `bin` exists and is newer than every file under src/ and workers/ and package.json. */
function isFresh(bin: string, root: string): boolean {
  if (!existsSync(bin)) return false;
  const built = statSync(bin).mtimeMs;
  const newer = (path: string): boolean => {
    const stat = statSync(path);
    return stat.isDirectory()
      ? readdirSync(path).some((name) => newer(join(path, name)))
      : stat.mtimeMs > built;
  };
  return !['src', 'workers', 'package.json'].some((path) => newer(join(root, path)));
}
