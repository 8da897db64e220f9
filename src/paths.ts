import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The package's root folder, found by walking up from this module. The same code runs from
 * `src/` (through tsx) and from `dist/src/` (compiled), so a fixed relative path would be wrong
 * in one of them.
 */
export const packageRoot: string = (() => {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, 'package.json'))) {
    const parent = dirname(dir);
    if (parent === dir) throw new Error('package.json of ledger-indexer not found');
    dir = parent;
  }
  return dir;
})();

/** Folder of the drizzle-kit migrations shipped with the package. */
export const migrationsFolder = join(packageRoot, 'migrations');
