#!/usr/bin/env node
// Fails when a module imports across a forbidden boundary, or when files import each other in a
// circle (type-only imports count). Dependencies point one way: cli and workers → app → sync,
// client, db, queue → verify → domain; src/sync is the pure core, src/domain the floor every
// room stands on, and src never imports workers/. Reads import and export-from statements as text; `import type` counts as
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
  '@nats-io/transport-node',
  '@nats-io/jetstream',
];

/** Every room above the domain floor, for rules that keep a floor from climbing. */
const ABOVE_DOMAIN = [
  'src/sync/',
  'src/verify/',
  'src/client/',
  'src/db/',
  'src/queue/',
  'src/app/',
  'src/cli/',
  'src/http/',
  'src/metrics/',
  'src/simulator/',
  'src/digest/',
  'src/service-query/',
  'src/feed/',
  'src/logger.ts',
  'src/config.ts',
  'src/nats-settings.ts',
];

/** Every room above the domain floor but those named. */
const roomsBut = (...kept) => ABOVE_DOMAIN.filter((room) => !kept.includes(room));

/** The rooms of the sync core's features: each may use the shared files of src/sync and the ports. */
const SYNC_FEATURES = ['src/sync/walk/', 'src/sync/backfill/', 'src/sync/reread/'];

/**
 * Each rule: files under `from` may not import `to` (a folder or file of the tree, or a package
 * name), except what `except` names; `runtimeOnly` lets `import type` through.
 */
const RULES = [
  { from: 'src/', to: ['workers/'], why: 'workers/ imports src/, never the reverse' },
  {
    from: 'src/domain/',
    to: [...ABOVE_DOMAIN, ...IO_PACKAGES],
    why: 'the domain floor (record model, integrity, stream keys, rawId ranges, lease owners) stands on nothing above it',
  },
  {
    from: 'src/verify/',
    to: [...roomsBut('src/verify/', 'src/db/'), ...IO_PACKAGES],
    why: 'verify judges what it is handed, without I/O: it stands on the domain floor',
  },
  {
    from: 'src/verify/',
    to: ['src/db/'],
    except: ['src/db/queries/'],
    why: 'verify may name the read models of the queries that return them, never run the database',
  },
  {
    from: 'src/verify/',
    to: ['src/db/'],
    runtimeOnly: true,
    why: 'verify may name the read models of the queries that return them, never run the database',
  },
  {
    from: 'src/sync/',
    to: [...roomsBut('src/sync/', 'src/verify/', 'src/digest/'), ...IO_PACKAGES],
    why: 'the sync core is pure: it is handed its fetches and its store',
  },
  {
    from: 'src/sync/ports/',
    to: ['src/sync/', 'src/verify/'],
    except: ['src/sync/ports/'],
    why: 'the ports are contracts over the domain: they name no engine code',
  },
  {
    from: 'src/sync/',
    to: SYNC_FEATURES,
    except: SYNC_FEATURES,
    why: 'the shared files of the sync core serve its features, never the reverse',
  },
  {
    from: 'src/sync/walk/',
    to: ['src/sync/backfill/', 'src/sync/reread/'],
    why: 'the stream walk stands alone: the backfill runs walks, re-reads follow them',
  },
  {
    from: 'src/sync/reread/',
    to: ['src/sync/walk/', 'src/sync/backfill/'],
    why: 're-reads are planned and run apart from the walks',
  },
  {
    from: 'src/digest/',
    to: [...roomsBut('src/digest/', 'src/metrics/'), ...IO_PACKAGES],
    why: 'the digest is pure and shared by the mirror and the simulator, so both hash records the same way',
  },
  {
    from: 'src/service-query/',
    to: [...roomsBut('src/service-query/'), ...IO_PACKAGES],
    why: "how the service's query endpoints read their parameters is pure and shared by the simulator and the mirror's read API",
  },
  {
    from: 'src/feed/',
    to: [
      'src/app/',
      'src/cli/',
      'src/http/',
      'src/queue/',
      'src/client/',
      'src/sync/',
      'src/simulator/',
      'src/verify/',
    ],
    why: 'the change feed stands on the database: app wires it into the HTTP surface',
  },
  {
    from: 'src/db/',
    to: [
      'src/app/',
      'src/client/',
      'src/queue/',
      'src/cli/',
      'src/http/',
      'src/simulator/',
      'src/verify/',
      'src/feed/',
    ],
    why: 'the database layer knows only the domain floor and the ports it implements',
  },
  {
    from: 'src/db/',
    to: ['src/sync/'],
    except: ['src/sync/ports/'],
    why: 'the database layer implements the ports; it never runs the engine',
  },
  {
    from: 'src/db/',
    to: ['src/sync/ports/'],
    runtimeOnly: true,
    why: 'the ports are types: the database layer names them',
  },
  {
    from: 'src/db/schema/',
    to: ['src/db/write/', 'src/db/stores/', 'src/db/queries/'],
    why: 'the schema is the floor of the database layer',
  },
  {
    from: 'src/db/queries/',
    to: ['src/db/write/', 'src/db/stores/'],
    why: 'the read side answers questions; it writes nothing',
  },
  {
    from: 'src/db/write/',
    to: ['src/db/stores/', 'src/db/queries/'],
    why: 'the page write is built from its own pieces; the stores run it',
  },
  {
    from: 'src/client/',
    to: roomsBut('src/client/', 'src/metrics/', 'src/digest/', 'src/logger.ts', 'src/config.ts'),
    why: 'the client speaks HTTP and hands over the domain model',
  },
  {
    from: 'src/queue/',
    to: ['src/app/', 'src/cli/', 'src/http/', 'src/db/'],
    why: 'queue wiring is joined to the database in src/app (the shared budget is a client budget kept in Redis)',
  },
  { from: 'src/http/', to: ['src/cli/'], why: 'the HTTP surface is wired by app, not by commands' },
  { from: 'src/app/', to: ['src/cli/'], why: 'app is the composition the commands use' },
  {
    from: 'src/app/status/',
    to: ['src/app/verify/', 'src/app/worker/'],
    why: 'the status report reads what the database holds; it neither verifies nor runs jobs',
  },
  {
    from: 'src/app/verify/',
    to: ['src/app/status/', 'src/app/worker/'],
    why: 'verify compares the mirror with the service on its own',
  },
  {
    from: 'src/simulator/',
    to: [
      'src/domain/',
      ...roomsBut(
        'src/simulator/',
        'src/client/',
        'src/metrics/',
        'src/digest/',
        'src/service-query/',
        'src/logger.ts',
        'src/config.ts',
      ),
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
/** Every file's imports of other files of the tree, type-only ones included. */
const graph = new Map();
for (const file of files) {
  const from = relative(root, file);
  const imports = importsOf(file);
  graph.set(
    from,
    imports.map((i) => i.to).filter((to) => to.startsWith('src/') || to.startsWith('workers/')),
  );
  for (const { to, typeOnly } of imports) {
    for (const rule of RULES) {
      if (!matches(from, rule.from)) continue;
      if (rule.runtimeOnly && typeOnly) continue;
      if (!rule.to.some((pattern) => matches(to, pattern))) continue;
      if (rule.except?.some((pattern) => matches(to, pattern))) continue;
      violations.push(`${from} imports ${to}: ${rule.why}`);
    }
  }
}

/**
 * Import circles between files, type-only imports included: a circle ties its files into one
 * piece that can be neither read nor moved apart. Tarjan's strongly connected components.
 */
function circles() {
  const index = new Map();
  const low = new Map();
  const stack = [];
  const onStack = new Set();
  const found = [];
  let next = 0;
  const visit = (node) => {
    index.set(node, next);
    low.set(node, next);
    next += 1;
    stack.push(node);
    onStack.add(node);
    for (const to of graph.get(node) ?? []) {
      if (!graph.has(to)) continue;
      if (!index.has(to)) {
        visit(to);
        low.set(node, Math.min(low.get(node), low.get(to)));
      } else if (onStack.has(to)) low.set(node, Math.min(low.get(node), index.get(to)));
    }
    if (low.get(node) !== index.get(node)) return;
    const component = [];
    let member;
    do {
      member = stack.pop();
      onStack.delete(member);
      component.push(member);
    } while (member !== node);
    if (component.length > 1 || (graph.get(node) ?? []).includes(node)) found.push(component.sort());
  };
  for (const node of [...graph.keys()].sort()) if (!index.has(node)) visit(node);
  return found;
}
for (const circle of circles())
  violations.push(`import circle (type-only imports count): ${circle.join(' -> ')}`);

if (violations.length > 0) {
  console.error(`${violations.length} forbidden import(s):`);
  for (const line of violations) console.error(`  ${line}`);
  process.exit(1);
}
console.log(`imports point one way, no import circles (${files.length} files checked)`);
