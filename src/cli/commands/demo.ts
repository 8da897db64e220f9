import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ENV } from '../../config.js';
import type { ActivityRow } from '../../db/report.js';
import type { NonFinalCounts } from '../../db/stream-queries.js';
import { intFlag } from '../command.js';
import { defineCommand } from '../define-command.js';
import { formatTable, formatUnits } from '../format.js';
import { createProgress } from '../progress.js';
import { signalExitCode } from '../run-outcome.js';
import { quietOnTerminal } from './sync.js';

const usage = `Usage: ledger-indexer demo [--records N] [--arrivals PER_S] [--seed S]

The zero-setup tour: starts the reference ledger server in-process on a free loopback port
(--records records, default 20000, at most 1000000, plus --arrivals new ones a second, default
20, at most 10000), syncs it into the embedded database (PGlite) with a progress display, and
prints a short report: records by action and token, volumes in token units, and the records not
final yet.

The database lives in a fresh temporary folder, removed at the end, unless
$${ENV.dataDir} names a folder to keep it in.`;

export const command = defineCommand({
  name: 'demo',
  usage,
  flags: {
    records: { type: 'string' },
    arrivals: { type: 'string' },
    seed: { type: 'string' },
  },
  async run({ values, io, config: loadConfig, logger, onClose }) {
    const records = intFlag('records', values.records, 1, 1_000_000) ?? 20_000;
    const arrivals = intFlag('arrivals', values.arrivals, 0, 10_000) ?? 20;
    const keptDir = io.env[ENV.dataDir]?.trim() || undefined;
    const base = loadConfig();
    const log = logger(quietOnTerminal(base, io));
    const { createSimulator } = await import('../../simulator/index.js');
    const { createContext } = await import('../../app/context.js');
    const { syncOnce } = await import('../../app/sync-once.js');
    const { readActivity } = await import('../../db/report.js');
    const { countNonFinal } = await import('../../db/stream-queries.js');

    const dataDir = keptDir ?? (await mkdtemp(join(tmpdir(), 'ledger-indexer-demo-')));
    if (!keptDir) onClose(() => rm(dataDir, { recursive: true, force: true }));
    const simulator = createSimulator({ records, arrivalsPerSecond: arrivals, seed: values.seed ?? 1 });
    onClose(() => simulator.close());
    const { url } = await simulator.listen({ host: '127.0.0.1', port: 0 });
    io.stderr.write(`demo: ledger simulator with ${records} records on ${url}, database in ${dataDir}\n`);
    // A local simulator: no request budget to respect, and enough pages in flight to keep both cores busy.
    const config = {
      ...base,
      ledgerBaseUrl: url,
      databaseUrl: undefined,
      dataDir,
      requestsPerSecond: 0,
      concurrency: Math.max(base.concurrency, 16),
    };
    const started = Date.now();
    const ctx = await createContext({ config, logger: log });
    onClose(() => ctx.close());
    const progress = createProgress({ out: io.stderr, tty: io.stderr.isTTY === true });
    const setupSeconds = (Date.now() - started) / 1000;
    const syncStarted = Date.now();
    const result = await syncOnce(ctx, { signal: io.signal, onPage: (event) => progress.page(event) });
    progress.done();
    const walk = result.streams[0];
    const seconds = (Date.now() - syncStarted) / 1000;
    io.stdout.write(
      `synced ${walk?.counts.inserted ?? 0} records (${walk?.pages ?? 0} pages) in ${seconds.toFixed(1)}s, ` +
        `${Math.round((walk?.records ?? 0) / seconds)} records/s (database set up in ${setupSeconds.toFixed(1)}s)\n`,
    );
    if (result.stopped) return signalExitCode(io.signal);
    // Records kept arriving during the backfill: a tail pass picks them up, still unsettled.
    const tail = await syncOnce(ctx, { signal: io.signal, refreshTokens: false });
    const caught = tail.streams[0];
    io.stdout.write(
      `tail pass: ${caught?.counts.inserted ?? 0} records that arrived meanwhile (${caught?.pages ?? 0} pages)\n\n`,
    );
    const activity = await readActivity(ctx.database.db);
    const nonFinal = await countNonFinal(ctx.database.db);
    io.stdout.write(`${renderReport(activity, nonFinal)}\n`);
    if (keptDir) io.stdout.write(`\ndatabase kept in ${keptDir}\n`);
    return tail.stopped ? signalExitCode(io.signal) : 0;
  },
});

/** The demo's report: records and volumes by action and token, then the non-final backlog. */
export function renderReport(activity: readonly ActivityRow[], nonFinal: NonFinalCounts): string {
  const rows = [
    ['ACTION', 'TOKEN', 'RECORDS', 'VOLUME'],
    ...activity.map((row) => [
      row.action,
      row.symbol === row.tokenTag ? row.tokenTag : `${row.symbol} (${row.tokenTag})`,
      String(row.records),
      row.decimals === null
        ? `${row.volume} (smallest unit)`
        : `${formatUnits(row.volume, row.decimals)} ${row.symbol}`,
    ]),
  ];
  const total = activity.reduce((sum, row) => sum + row.records, 0);
  return [
    `records by action and token (${total} in all):`,
    formatTable(rows, [false, false, true, true]),
    '',
    `not final yet: ${nonFinal.queued} waiting for a re-read (${nonFinal.notPackaged} not packaged, ` +
      `${nonFinal.queued - Math.min(nonFinal.notPackaged, nonFinal.queued)} burns waiting for their target-chain hash)`,
  ].join('\n');
}
