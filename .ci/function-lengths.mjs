#!/usr/bin/env node
// Fails when a function in src/ or workers/ spans more than 100 lines (its comments and blank
// lines included), naming each one. Biome finds the functions: its lines-per-function rule set to
// one line reports every function with its span.
//   node .ci/function-lengths.mjs [--max N] [--all] [path...]   (--all lists every function)
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const args = process.argv.slice(2);
const maxAt = args.indexOf('--max');
const max = maxAt >= 0 ? Number(args[maxAt + 1]) : 100;
const paths = args.filter((arg, i) => !arg.startsWith('--') && (maxAt < 0 || i !== maxAt + 1));
const everyLine = { level: 'error', options: { maxLines: 1, skipBlankLines: false } };
const config = {
  formatter: { enabled: false },
  linter: { rules: { preset: 'none', complexity: { noExcessiveLinesPerFunction: everyLine } } },
};

const dir = mkdtempSync(join(tmpdir(), 'function-lengths-'));
let run;
try {
  writeFileSync(join(dir, 'biome.json'), JSON.stringify(config));
  const biome = join(root, 'node_modules', '.bin', 'biome');
  const targets = paths.length > 0 ? paths : ['src', 'workers'];
  const options = [`--config-path=${dir}`, '--reporter=json', '--max-diagnostics=none'];
  run = spawnSync(biome, ['lint', ...options, ...targets], {
    cwd: root,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
} finally {
  rmSync(dir, { recursive: true, force: true });
}
let report;
try {
  report = JSON.parse(run.stdout);
} catch {
  console.error(`biome gave no report: ${run.error ?? run.stderr}`);
  process.exit(2);
}
const functions = report.diagnostics
  .filter((d) => d.category === 'lint/complexity/noExcessiveLinesPerFunction')
  .map((d) => ({
    at: `${d.location.path}:${d.location.start.line}`,
    lines: d.location.end.line - d.location.start.line + 1,
  }))
  .sort((a, b) => b.lines - a.lines);
const long = functions.filter((f) => f.lines > max);
for (const f of args.includes('--all') ? functions : long)
  console.log(`${String(f.lines).padStart(5)}  ${f.at}`);
if (long.length > 0) {
  console.error(`${long.length} function(s) over ${max} lines`);
  process.exit(1);
}
console.log(`${functions.length} functions, none over ${max} lines`);
