// Runs the test files with node's test runner. Node 20's runner takes no globs, so the files are
// listed here. Exits non-zero when any test fails or when no test ran at all.
import { spawn } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const suites = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const folders = suites.length > 0 ? suites : ['unit', 'integration'];

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
const collected = folders.flatMap((folder) => collect(join(root, 'test', folder)));
const files = [...collected.filter((f) => !heavy(f)), ...collected.filter(heavy)];
if (files.length === 0) {
  console.error('no test files found');
  process.exit(1);
}

const child = spawn(
  process.execPath,
  ['--import', 'tsx', '--test', '--test-concurrency=2', '--test-reporter=spec', ...files],
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
