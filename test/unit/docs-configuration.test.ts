import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { ENV } from '../../src/config.js';
import { packageRoot } from '../../src/paths.js';

const CONFIG = join(packageRoot, 'src', 'config.ts');
const DOC = join(packageRoot, 'docs', 'configuration.md');

/**
 * Every environment variable `src/config.ts` reads. It reads `env[ENV[key]]` for each setting,
 * so the names are `ENV`'s values; any other read of `env` in its source (`env.NAME`,
 * `env['NAME']`) is a setting too, and a read this does not understand is reported as such.
 */
function settingsRead(source: string): { names: Set<string>; unread: string[] } {
  const names = new Set<string>(Object.values(ENV));
  const unread: string[] = [];
  for (const match of source.matchAll(/\benv(\??\.[A-Za-z_$][\w$]*|\[[^\]]*\]?)/g)) {
    const access = match[1] ?? '';
    const name =
      /^\??\.([A-Z][A-Z0-9_]*)$/.exec(access)?.[1] ??
      /^\[\s*['"]([A-Z][A-Z0-9_]*)['"]\s*\]$/.exec(access)?.[1];
    if (name !== undefined) names.add(name);
    else if (!access.startsWith('[ENV[')) unread.push(`env${access}`);
  }
  return { names, unread };
}

/** The settings the table of docs/configuration.md documents: the names in each row's first cell. */
function settingsDocumented(doc: string): Set<string> {
  const names = new Set<string>();
  for (const row of doc.split('\n').filter((line) => line.startsWith('| `'))) {
    const first = row.split('|')[1] ?? '';
    for (const match of first.matchAll(/`([A-Z][A-Z0-9_]*)`/g)) names.add(match[1] ?? '');
  }
  return names;
}

describe('docs/configuration.md', () => {
  it('has a row for every setting src/config.ts reads', () => {
    const { names, unread } = settingsRead(readFileSync(CONFIG, 'utf8'));
    assert.deepEqual(unread, [], 'src/config.ts reads the environment in a way this test cannot follow');
    assert.ok(names.size >= 25, `only ${names.size} settings found in src/config.ts`);
    const documented = settingsDocumented(readFileSync(DOC, 'utf8'));
    const missing = [...names].filter((name) => !documented.has(name)).sort();
    assert.deepEqual(
      missing,
      [],
      `settings src/config.ts reads that docs/configuration.md lacks: ${missing.join(', ')}`,
    );
  });

  it('reads settings from a source the way config.ts may grow: direct reads count, others are reported', () => {
    const { names, unread } = settingsRead(
      "const a = env[ENV[key]]; const b = env.LEDGER_NEW_ONE; const c = env['LEDGER_OTHER']; const d = env[name];",
    );
    assert.ok(names.has('LEDGER_NEW_ONE') && names.has('LEDGER_OTHER') && names.has('DATABASE_URL'));
    assert.deepEqual(unread, ['env[name]']);
    assert.deepEqual(
      [...settingsDocumented('| `LEDGER_A` | `--a` | x |\n| `B_C`, `D` | y |\ntext `LEDGER_E`')],
      ['LEDGER_A', 'B_C', 'D'],
    );
  });
});
