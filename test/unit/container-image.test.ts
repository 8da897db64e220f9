import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { packageRoot } from '../../src/paths.js';

const read = (path: string) => readFileSync(join(packageRoot, path), 'utf8');

/** One Dockerfile instruction: its keyword upper-cased and its arguments, continuations joined. */
interface Instruction {
  keyword: string;
  args: string;
}

/** The stages of a Dockerfile, each the instructions from its FROM on (comments dropped). */
function dockerStages(text: string): Instruction[][] {
  const joined = text
    .split('\n')
    .filter((line) => !/^\s*#/.test(line))
    .join('\n')
    .replace(/\\\n/g, ' ');
  const stages: Instruction[][] = [];
  for (const line of joined.split('\n')) {
    const match = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!match) continue;
    const instruction = { keyword: (match[1] as string).toUpperCase(), args: (match[2] as string).trim() };
    if (instruction.keyword === 'FROM') stages.push([]);
    stages.at(-1)?.push(instruction);
  }
  return stages;
}

const dockerfile = read('Dockerfile');
const stages = dockerStages(dockerfile);
const runtime = stages.at(-1) ?? [];
const all = (stage: Instruction[], keyword: string) => stage.filter((i) => i.keyword === keyword);

interface ComposeService {
  image?: string;
  build?: unknown;
  volumes?: Array<string | { type?: string; source?: string }>;
  ports?: string[];
  profiles?: string[];
  environment?: Record<string, string>;
  command?: string[];
  entrypoint?: string[];
}
const compose = parse(read('docker-compose.yml'), { merge: true }) as {
  services: Record<string, ComposeService>;
};
/** The services running ledger-indexer itself: every one built from this repository. */
const appServices = Object.entries(compose.services).filter(([, service]) => service.build !== undefined);

describe('the production image (Dockerfile)', () => {
  it('builds in one stage and runs from a second one on a pinned Node 20 image', () => {
    assert.ok(stages.length >= 2, `${stages.length} stage(s)`);
    const base = /^ARG NODE_IMAGE=(\S+)/m.exec(dockerfile)?.[1];
    assert.match(base ?? '', /^node:20[.\w-]*$/, 'a node:20 tag');
    assert.doesNotMatch(base ?? '', /:latest$/);
    for (const stage of stages) assert.match(stage[0]?.args ?? '', /^(\$\{NODE_IMAGE\}|node:20)/);
    const build = stages[0] ?? [];
    assert.ok(
      all(build, 'RUN').some((i) => /\bnpm ci\b/.test(i.args)),
      'the build stage installs',
    );
    assert.ok(
      all(build, 'RUN').some((i) => /\bnpm run build\b/.test(i.args)),
      'the build stage builds',
    );
  });

  it('installs the runtime dependencies only, and copies the bundle and the migrations', () => {
    const installs = all(runtime, 'RUN').filter((i) => /\bnpm (ci|install|i)\b/.test(i.args));
    assert.ok(installs.length > 0, 'the runtime stage installs its dependencies');
    for (const install of installs) assert.match(install.args, /--omit=dev\b/, install.args);
    const copies = all(runtime, 'COPY').map((i) => i.args);
    assert.ok(
      copies.some((c) => /^--from=\S+\s+\S*\/dist\/cli\s/.test(c)),
      'the bundled command (dist/cli) comes from the build stage',
    );
    assert.ok(
      copies.some((c) => /(^|\s)migrations\s/.test(c)),
      'the migrations are copied',
    );
    assert.ok(
      copies.some((c) => /(^|\s)package\.json\s/.test(c)),
      'package.json (the package root) is copied',
    );
  });

  it('runs the command as a user other than root', () => {
    const users = all(runtime, 'USER');
    const last = users.at(-1)?.args;
    assert.ok(last !== undefined, 'the runtime stage sets USER');
    assert.doesNotMatch(last, /^(root|0)(:|$)/);
    const entrypoint = JSON.parse(all(runtime, 'ENTRYPOINT').at(-1)?.args ?? '[]') as string[];
    // The command as its first line runs it (src/cli/bin.ts): the same node flags.
    const firstLine = readFileSync(join(packageRoot, 'src', 'cli', 'bin.ts'), 'utf8').split('\n')[0]!;
    const flags = firstLine
      .replace(/^#!\/usr\/bin\/env -S node ?/, '')
      .split(' ')
      .filter(Boolean);
    assert.deepEqual(entrypoint, ['node', ...flags, 'dist/cli/ledger-indexer.js']);
  });

  it('checks /health of the HTTP surface it exposes, with node itself', () => {
    const check = all(runtime, 'HEALTHCHECK').at(-1)?.args ?? '';
    assert.doesNotMatch(check, /^NONE\b/);
    const command = JSON.parse(/\bCMD\s+(\[.*\])\s*$/.exec(check)?.[1] ?? '[]') as string[];
    assert.equal(command[0], 'node');
    assert.match(command.join(' '), /\/health\b/);
    assert.match(command.join(' '), /LEDGER_HTTP_PORT\|\|9464/);
    assert.deepEqual(
      all(runtime, 'EXPOSE').map((i) => i.args),
      ['9464'],
    );
  });

  it('keeps dependencies, builds and local data out of the build context (.dockerignore)', () => {
    const ignored = read('.dockerignore')
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !line.startsWith('#'));
    for (const entry of ['node_modules', '.git', 'dist', '.ledger-indexer', 'bench']) {
      assert.ok(ignored.includes(entry), `${entry} is ignored`);
    }
    for (const needed of ['src', 'workers', 'migrations', 'package.json', 'package-lock.json']) {
      assert.ok(!ignored.includes(needed), `${needed} is part of the context`);
    }
  });
});

describe('docker-compose.yml runs that image', () => {
  it('builds the image for every ledger-indexer service and bind-mounts no source', () => {
    const names = appServices.map(([name]) => name).sort();
    assert.deepEqual(names, ['cli', 'migrate', 'scheduler', 'simulator', 'worker']);
    for (const [name, service] of appServices) {
      assert.ok(service.image?.startsWith('ledger-indexer:'), `${name} names the image`);
      const build = typeof service.build === 'string' ? service.build : undefined;
      assert.equal(build, '.', `${name} builds the Dockerfile here`);
      assert.deepEqual(service.volumes ?? [], [], `${name} mounts nothing`);
      const words = [...(service.entrypoint ?? []), ...(service.command ?? [])].join(' ');
      assert.doesNotMatch(words, /\bnpm (ci|install)\b|\bnpx\b/, `${name} installs nothing at start`);
    }
    for (const [name, service] of Object.entries(compose.services)) {
      for (const volume of service.volumes ?? []) {
        const source = typeof volume === 'string' ? volume.split(':')[0] : volume.source;
        assert.ok(
          source === undefined || !/^\.\/?$|^\.\/(src|workers|dist|node_modules)\b/.test(source),
          `${name} mounts ${source}`,
        );
      }
    }
  });

  it('keeps the workers’ HTTP surface inside the compose network, and the profiles', () => {
    const worker = compose.services.worker;
    assert.equal(worker?.environment?.LEDGER_HTTP_PORT, '9464');
    assert.equal(worker?.environment?.LEDGER_HTTP_HOST, '0.0.0.0');
    assert.deepEqual(worker?.ports ?? [], [], 'no published port');
    for (const name of ['prometheus', 'grafana'])
      assert.deepEqual(compose.services[name]?.profiles, ['monitoring']);
    assert.deepEqual(compose.services.simulator?.profiles, ['simulator']);
    assert.deepEqual(compose.services.cli?.profiles, ['tools']);
    for (const [name, service] of appServices) {
      assert.equal(
        service.environment?.DATABASE_URL,
        'postgres://postgres:postgres@postgres:5432/ledger',
        name,
      );
    }
  });

  it('runs NATS with JetStream on a volume, checked healthy, the feed sent to it only when LEDGER_NATS_URL is set', () => {
    const nats = compose.services.nats as ComposeService & { healthcheck?: { test?: string[] } };
    assert.match(nats?.image ?? '', /^nats:2\b/);
    assert.ok(nats?.command?.includes('--jetstream'), 'JetStream on');
    const store = nats?.command?.[(nats?.command?.indexOf('--store_dir') ?? -2) + 1];
    assert.ok(
      (nats?.volumes ?? []).some((v) => typeof v === 'string' && v.endsWith(`:${store}`)),
      `the store (${store}) is a volume`,
    );
    assert.deepEqual(nats?.ports, ['127.0.0.1:4222:4222'], 'published on loopback only');
    assert.match((nats?.healthcheck?.test ?? []).join(' '), /healthz/);
    // Compose's own substitution, passed on as written: empty (off) unless the variable is set.
    const passedOn = ['$', '{LEDGER_NATS_URL:-}'].join('');
    for (const [name, service] of appServices) {
      assert.equal(service.environment?.LEDGER_NATS_URL, passedOn, `${name}: off unless set`);
    }
  });
});
