// Runs the test files with node's test runner. Node 20's runner takes no globs, so the files are
// listed here. Exits non-zero when any test fails or when no test ran at all.
//   node test/run.mjs [unit | integration | <folder or file>…]   (default: unit and integration)
// A folder or file is taken relative to the repository, or to test/. Before any test starts, what
// the chosen files need from the machine is checked (test/preflight.mjs): a run missing PostgreSQL,
// Redis, NATS, their server programs or Chromium stops at once with one line naming it.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { preflight, testNeeds } from './preflight.mjs';

const root = new URL('..', import.meta.url).pathname;
const suites = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const selected = suites.length > 0 ? suites : ['unit', 'integration'];

function collect(dir) {
  let files = [];
  if (!existsSync(dir)) return files;
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) files = files.concat(collect(path));
    else if (name.endsWith('.test.ts')) files.push(relative(root, path));
  }
  return files;
}

// The chaos tests (two copies, run at once) keep several processes busy for minutes: they start
// last, so that they do not share the machine with the benchmark smoke test, which runs first.
const heavy = (file) => /chaos(-twin)?\.test\.ts$/.test(file);
/** A folder's test files, or the file itself; relative to the repository or to test/. */
function select(arg) {
  const path = [resolve(root, arg), resolve(root, 'test', arg)].find((p) => existsSync(p));
  if (path === undefined) {
    console.error(`no test folder or file ${arg} (in the repository or in test/)`);
    process.exit(1);
  }
  return statSync(path).isDirectory() ? collect(path) : [relative(root, path)];
}
const collected = [...new Set(selected.flatMap(select))];
const files = [...collected.filter((f) => !heavy(f)), ...collected.filter(heavy)];
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}
const missing = await preflight(testNeeds(files, { root }));
if (missing !== null) {
  console.error(missing);
  process.exit(1);
}

// The integration tests start the command as installed, the bundle in dist/cli
// (test/helpers/command-entry.ts): bundled here from the sources as they stand, so no test runs
// an older build. The unit tests start no command.
const bundled = files.some((f) => f.startsWith('test/integration/'))
  ? spawnSync('npm', ['run', '--silent', 'bundle'], { cwd: root, stdio: 'inherit' })
  : { status: 0 };
if (bundled.status !== 0) {
  console.error('npm run bundle failed: the tests run the bundled command');
  process.exit(1);
}

const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=3', '--test-reporter=spec', ...files],
  { cwd: root, stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, NODE_ENV: 'test' } },
);
// The runner's closing summary (`ℹ pass 12`…), read line by line: a failure's long output can
// come after it, so no fixed-size tail is enough.
const totals = {};
let partial = '';
child.stdout.on('data', (chunk) => {
  process.stdout.write(chunk);
  const lines = (partial + chunk.toString()).split('\n');
  partial = lines.pop() ?? '';
  for (const line of lines) {
    const match = /^ℹ (tests|pass|fail|cancelled|skipped|todo) (\d+)\s*$/.exec(line);
    if (match) totals[match[1]] = Number(match[2]);
  }
});
child.on('close', (code) => {
  const count = (label) => totals[label] ?? 0;
  const [tests, pass, fail] = [count('tests'), count('pass'), count('fail')];
  // A test whose hook failed is cancelled, not failed: it is counted, and fails the run, as one.
  const cancelled = count('cancelled');
  console.log(
    `${pass} passed, ${fail} failed, ${cancelled > 0 ? `${cancelled} cancelled, ` : ''}${count('skipped') + count('todo')} skipped`,
  );
  if (tests === 0) {
    console.error('no test ran');
    process.exit(1);
  }
  process.exit(code === 0 && fail === 0 && cancelled === 0 ? 0 : 1);
});
