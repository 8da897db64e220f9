// Measures how fast the simulator serves pages over loopback: one client, then 32 concurrent
// clients, at the given record count, plus memory and the ground-truth stream. The simulator runs
// in its own process (as in the benchmark), the clients here.
//
//   node --import tsx bench/simulator-throughput.ts [--records 1000000] [--seconds 10]
import { spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';

const { values } = parseArgs({
  options: { records: { type: 'string', default: '1000000' }, seconds: { type: 'string', default: '10' } },
});
const records = Number(values.records);
const seconds = Number(values.seconds);

const started = performance.now();
const child = spawn(
  process.execPath,
  [
    '--import',
    'tsx',
    'src/cli/bin.ts',
    'simulate',
    '--port',
    '0',
    '--records',
    String(records),
    '--arrivals',
    '0',
  ],
  { stdio: ['ignore', 'pipe', 'inherit'], cwd: new URL('..', import.meta.url).pathname },
);
const url = await new Promise<string>((resolve, reject) => {
  let out = '';
  child.stdout.on('data', (chunk) => {
    out += chunk;
    const match = /listening on (\S+)/.exec(out);
    if (match) resolve(match[1]!);
  });
  child.once('exit', () => reject(new Error('simulator exited')));
});
const startSeconds = (performance.now() - started) / 1000;
const pool = new Pool(url, { connections: 64, pipelining: 1 });

async function getText(path: string): Promise<string> {
  const res = await pool.request({ method: 'GET', path });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode}`);
  return text;
}
interface SimStats {
  memory: { rss: number; heapUsed: number; arrayBuffers: number };
  cpuUsage: { user: number; system: number };
}
const stats = async () => JSON.parse(await getText('/_sim/stats')) as SimStats;
const cpuMs = (s: SimStats) => (s.cpuUsage.user + s.cpuUsage.system) / 1000;

const totalPages = Math.ceil(records / 10);
const accounts = [
  ...new Set(
    (JSON.parse(await getText('/txs?page=1')) as { txs: Array<{ from: string }> }).txs.map((t) => t.from),
  ),
];

type PathOf = (i: number) => string;
async function measure(label: string, concurrency: number, pathOf: PathOf): Promise<void> {
  const deadline = performance.now() + seconds * 1000;
  let done = 0;
  let bytes = 0;
  const t0 = performance.now();
  const cpu0 = cpuMs(await stats());
  await Promise.all(
    Array.from({ length: concurrency }, async (_, worker) => {
      let i = worker;
      while (performance.now() < deadline) {
        const text = await getText(pathOf(i));
        bytes += text.length;
        done++;
        i += concurrency;
      }
    }),
  );
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = (cpuMs(await stats()) - cpu0) / 1000;
  const mb = bytes / elapsed / 1e6;
  // Pages per second of the simulator's own CPU time: what it could serve on a core of its own.
  console.log(
    `${label.padEnd(40)} ${String(Math.round(done / elapsed)).padStart(6)} pages/s ${mb.toFixed(1).padStart(6)} MB/s  ${String(Math.round(done / cpu)).padStart(6)} pages per CPU-second`,
  );
}

const rss = (n: number) => `${Math.round(n / 1e6)} MB`;
const before = await stats();
console.log(`records ${records}: started in ${startSeconds.toFixed(1)} s, rss ${rss(before.memory.rss)}`);
// Pages spread over the whole list (a walk over a million records touches each once).
const spread: PathOf = (i) => `/txs?page=${1 + ((i * 7919) % totalPages)}`;
await measure('1 client, /txs pages across the list', 1, spread);
await measure(
  '32 clients, /txs pages across the list',
  32,
  (i) => `/txs?page=${1 + ((i * 104729) % totalPages)}`,
);
await measure('1 client, /txs?page=1 (head)', 1, () => '/txs?page=1');
await measure('32 clients, /txs?page=1 (head)', 32, () => '/txs?page=1');
await measure('32 clients, /txs?action=burn pages', 32, (i) => `/txs?action=burn&page=${1 + (i % 1000)}`);
await measure(
  '32 clients, /txsByAccount pages',
  32,
  (i) => `/txsByAccount/${accounts[i % accounts.length]}?page=${1 + (i % 20)}`,
);
const after = await stats();
console.log(
  `rss after load ${rss(after.memory.rss)}, heap used ${rss(after.memory.heapUsed)}, buffers ${rss(after.memory.arrayBuffers)}`,
);

const t0 = performance.now();
const res = await pool.request({ method: 'GET', path: '/_sim/records' });
let lines = 0;
for await (const chunk of res.body as AsyncIterable<Buffer>) {
  for (let at = chunk.indexOf(10); at >= 0; at = chunk.indexOf(10, at + 1)) lines++;
}
console.log(`ground truth: ${lines} NDJSON lines in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
console.log(`rss after ground truth ${rss((await stats()).memory.rss)}`);

await pool.close();
child.kill('SIGTERM');
