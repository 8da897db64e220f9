#!/usr/bin/env node
// Fails when a module imports across a forbidden boundary. Dependencies point one way:
// cli and workers → app → sync, client, db, queue; src/sync is the pure core and src never
// imports workers/. Reads import and export-from statements as text; `import type` counts as
// a type-only import, which some rules allow.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';

const root = resolve(dirname(new URL(import.meta.url).pathname), '..');

/** Libraries that do I/O: the pure core may not load them at run time. */
const IO_PACKAGES = [
  'pg',
  'pg-copy-streams',
  'drizzle-orm',
  'bullmq',
  'ioredis',
  'pino',
  'undici',
  '@electric-sql/pglite',
];

/**
 * Each rule: files under `from` may not import `to` (a folder or file of the tree, or a package
 * name); `runtimeOnly` lets `import type` through.
 */
const RULES = [
  { from: 'src/', to: ['workers/'], why: 'workers/ imports src/, never the reverse' },
  {
    from: 'src/sync/',
    to: [
      'src/client/',
      'src/db/',
      'src/queue/',
      'src/app/',
      'src/cli/',
      'src/http/',
      'src/simulator/',
      'src/logger.ts',
      'src/config.ts',
      ...IO_PACKAGES,
    ],
    why: 'the sync core is pure: it is handed its fetches and its store',
  },
  {
    from: 'src/digest/',
    to: [
      'src/sync/',
      'src/client/',
      'src/db/',
      'src/queue/',
      'src/app/',
      'src/cli/',
      'src/http/',
      'src/simulator/',
      'src/logger.ts',
      'src/config.ts',
      ...IO_PACKAGES,
    ],
    why: 'the digest is pure and shared by the mirror and the simulator, so both hash records the same way',
  },
  {
    from: 'src/db/',
    to: ['src/app/', 'src/client/', 'src/queue/', 'src/cli/', 'src/http/', 'src/simulator/'],
    why: 'the database layer knows only the domain model',
  },
  {
    from: 'src/client/',
    to: ['src/db/', 'src/queue/', 'src/app/', 'src/cli/', 'src/http/', 'src/simulator/'],
    why: 'the client speaks HTTP only',
  },
  {
    from: 'src/client/',
    to: ['src/sync/'],
    runtimeOnly: true,
    why: 'the client may name the domain types, not run the engine',
  },
  {
    from: 'src/queue/',
    to: ['src/app/', 'src/cli/', 'src/http/', 'src/db/'],
    why: 'queue wiring is joined to the database in src/app (the shared budget is a client budget kept in Redis)',
  },
  { from: 'src/http/', to: ['src/cli/'], why: 'the HTTP surface is wired by app, not by commands' },
  { from: 'src/app/', to: ['src/cli/'], why: 'app is the composition the commands use' },
  {
    from: 'src/simulator/',
    to: [
      'src/db/',
      'src/queue/',
      'src/app/',
      'src/cli/',
      'src/http/',
      'src/sync/',
      ...IO_PACKAGES.filter((p) => p !== 'pino'),
    ],
    why: 'the simulator stands alone',
  },
];

function sources(dir) {
  const out = [];
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sources(path));
    else if (/\.(ts|mts|js|mjs)$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

const IMPORT = /(?:^|\n)\s*(import|export)\s+(type\s+)?(?:[^;'"]*?\s+from\s+)?['"]([^'"]+)['"]/g;
const DYNAMIC = /\bimport\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The imports of one file: what it names (a tree path or a package) and whether type-only. */
function importsOf(file) {
  const text = readFileSync(file, 'utf8');
  const found = [];
  const target = (spec) => {
    if (!spec.startsWith('.'))
      return spec.startsWith('node:')
        ? null
        : spec
            .split('/')
            .slice(0, spec.startsWith('@') ? 2 : 1)
            .join('/');
    return relative(root, resolve(dirname(file), spec)).replace(/\.js$/, '.ts');
  };
  for (const m of text.matchAll(IMPORT)) {
    const to = target(m[3]);
    if (to) found.push({ to, typeOnly: Boolean(m[2]) });
  }
  for (const m of text.matchAll(DYNAMIC)) {
    const to = target(m[1]);
    if (to) found.push({ to, typeOnly: false });
  }
  return found;
}

const matches = (path, pattern) => (pattern.endsWith('/') ? path.startsWith(pattern) : path === pattern);
const violations = [];
const files = ['src', 'workers'].flatMap((dir) => sources(join(root, dir)));
for (const file of files) {
  const from = relative(root, file);
  for (const { to, typeOnly } of importsOf(file)) {
    for (const rule of RULES) {
      if (!matches(from, rule.from)) continue;
      if (rule.runtimeOnly && typeOnly) continue;
      if (rule.to.some((pattern) => matches(to, pattern)))
        violations.push(`${from} imports ${to}: ${rule.why}`);
    }
  }
}

if (violations.length > 0) {
  console.error(`${violations.length} forbidden import(s):`);
  for (const line of violations) console.error(`  ${line}`);
  process.exit(1);
}
console.log(`imports point one way (${files.length} files checked)`);
