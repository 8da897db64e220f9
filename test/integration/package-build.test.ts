import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';

const root = new URL('../..', import.meta.url).pathname;
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as {
  bin: Record<string, string>;
  scripts: Record<string, string>;
  exports: Record<string, { types: string; default: string } | string>;
};

// Inside the package (under node_modules/.cache) so the built files resolve its dependencies.
const cache = join(root, 'node_modules', '.cache');
mkdirSync(cache, { recursive: true });
const out = mkdtempSync(join(cache, 'ledger-indexer-build-'));
/** Where a package path under `dist/` lands in this build's output folder. */
const built = (path: string) => join(out, path.replace(/^(\.\/)?dist\//, ''));

describe('npm run build', { timeout: 120_000 }, () => {
  before(() => {
    // The build's two steps, each into this file's folder rather than dist/ (which other tests
    // and the benchmark run from): the compiler's, then the bundle's (`--outdir` given last wins).
    assert.match(
      pkg.scripts.build ?? '',
      /^tsc -p tsconfig\.build\.json && .+ && npm run --silent bundle$/,
      'the build compiles, then bundles',
    );
    for (const [command, args] of [
      [join(root, 'node_modules', '.bin', 'tsc'), ['-p', 'tsconfig.build.json', '--outDir', out]],
      ['npm', ['run', '--silent', 'bundle', '--', `--outdir=${join(out, 'cli')}`]],
    ] as const) {
      const step = spawnSync(command, args, { cwd: root, encoding: 'utf8', timeout: 110_000 });
      assert.equal(step.status, 0, step.stdout + step.stderr);
    }
  });
  after(() => rmSync(out, { recursive: true, force: true }));

  it('emits the library and the bundled command, and leaves test/ and bench/ out', () => {
    assert.deepEqual(
      ['test', 'bench'].filter((folder) => existsSync(join(out, folder))),
      [],
    );
    const main = pkg.exports['.'];
    assert.ok(main && typeof main === 'object');
    for (const path of [...Object.values(pkg.bin), main.types, main.default]) {
      assert.ok(existsSync(built(path)), `${path} is built`);
    }
    // The worker process entry point of images and process managers, beside the command.
    assert.ok(existsSync(join(out, 'cli', 'worker.js')));

    const help = spawnSync(process.execPath, [built(pkg.bin['ledger-indexer'] ?? ''), '--help'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 30_000,
    });
    assert.equal(help.status, 0, help.stderr);
    assert.match(help.stdout, /sync/);
  });

  it('packs only the built library and the bundle, whatever else an older build left in dist/', () => {
    const pack = spawnSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
      cwd: root,
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(pack.status, 0, pack.stderr);
    const [listing] = JSON.parse(pack.stdout) as Array<{ files: Array<{ path: string }> }>;
    const folders = new Set(listing?.files.map((f) => f.path.split('/').slice(0, 2).join('/')));
    const shipped = [...folders].filter((folder) => folder.startsWith('dist/')).sort();
    assert.deepEqual(shipped, ['dist/cli', 'dist/src']);
  });

  it('exports the client, the simulator and the one-shot sync from the package entry', async () => {
    const main = pkg.exports['.'];
    assert.ok(main && typeof main === 'object');
    const library = (await import(pathToFileURL(built(main.default)).href)) as Record<string, unknown>;
    for (const name of ['createLedgerClient', 'createSimulator', 'createContext', 'syncOnce', 'loadConfig']) {
      assert.equal(typeof library[name], 'function', `${name} is exported`);
    }
    for (const internal of ['walkStream', 'createPgStore', 'fetchRange', 'buildPageWrite']) {
      assert.equal(library[internal], undefined, `${internal} stays internal`);
    }
  });
});
