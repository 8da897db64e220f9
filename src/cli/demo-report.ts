/**
 * The demo's report, as pure functions of what the database holds: a table of records,
 * movements and volumes by action and token that fits {@link REPORT_WIDTH} columns whatever
 * the amounts (the simulator mints 78-digit ones), its footnotes, and the non-final backlog.
 */
import type { ActivityRow } from '../db/queries/action-report.js';
import type { NonFinalCounts } from '../db/queries/stream-queries.js';
import { formatCompactUnits, formatTable } from './format.js';

/** The widest line the report prints: it reads on an 100-column terminal without wrapping. */
export const REPORT_WIDTH = 100;

/** Widest cells: a label the service made up (an action, a symbol) is cut, never the table. */
const MAX_ACTION = 10;
const MAX_SYMBOL = 10;
const MAX_TOKEN = 20;

/** `text` cut to `max` characters, the last one an ellipsis when cut. */
export function cut(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/**
 * The TOKEN cell of each row: the symbol, or, where two tags share a symbol, the symbol and the
 * start of the tag, so rows of different tokens never look alike.
 */
function tokenLabels(activity: readonly ActivityRow[]): string[] {
  const tagsBySymbol = new Map<string, Set<string>>();
  for (const row of activity) {
    const tags = tagsBySymbol.get(row.symbol) ?? new Set<string>();
    tags.add(row.tokenTag);
    tagsBySymbol.set(row.symbol, tags);
  }
  return activity.map((row) => {
    const symbol = cut(row.symbol, MAX_SYMBOL);
    if ((tagsBySymbol.get(row.symbol)?.size ?? 0) < 2) return symbol;
    return `${symbol} (${cut(row.tokenTag, MAX_TOKEN - symbol.length - 3)})`;
  });
}

/** The VOLUME cell (token units, compact) and its unit: `raw` when the token's decimals are unknown. */
function volumeCells(row: ActivityRow): { text: string; unit: string; scientific: boolean } {
  const amount = formatCompactUnits(row.volume, row.decimals ?? 0);
  const unit = row.decimals === null ? 'raw' : cut(row.symbol, MAX_SYMBOL);
  return { ...amount, unit };
}

/** The report: the table, its footnotes, then the records not final yet. Every line fits {@link REPORT_WIDTH}. */
export function renderDemoReport(activity: readonly ActivityRow[], nonFinal: NonFinalCounts): string {
  const labels = tokenLabels(activity);
  const volumes = activity.map(volumeCells);
  const rows = [
    ['ACTION', 'TOKEN', 'RECORDS', 'MOVEMENTS', 'VOLUME', ''],
    ...activity.map((row, i) => [
      cut(row.action, MAX_ACTION),
      labels[i] ?? '',
      String(row.records),
      String(row.movements),
      volumes[i]?.text ?? '',
      volumes[i]?.unit ?? '',
    ]),
  ];
  const total = activity.reduce((sum, row) => sum + row.records, 0);
  const lines = [
    `records by action and token (${total} in all):`,
    formatTable(rows, [false, false, true, true, true, false]),
    '',
    'MOVEMENTS and VOLUME come from the ledger_movements view: a bundle moves its items, each in',
    "its own token, and only when it succeeded (its record counts under its first item's token).",
  ];
  if (activity.some((row) => row.decimals === null)) {
    lines.push('raw: a token /info does not list, summed in its smallest unit.');
  }
  lines.push(roundingNote(volumes.find((v) => v.scientific)?.text), '', nonFinalLine(nonFinal));
  return lines.join('\n');
}

/** Says that volumes are rounded, reading the first one in powers of ten aloud if any. */
function roundingNote(scientific: string | undefined): string {
  const match = scientific === undefined ? null : /^(-?[\d.]+)e([+-])(\d+)/.exec(scientific);
  if (!match) return 'Volumes are rounded for display; the database keeps them exact.';
  const [, mantissa, sign, power] = match;
  return (
    `Volumes are rounded for display (${mantissa}e${sign}${power} is ${mantissa} × 10^${sign === '-' ? '-' : ''}${power}); ` +
    'the database keeps them exact.'
  );
}

/** The backlog of records still to settle, in one line (two for counts of many digits). */
export function nonFinalLine(nonFinal: NonFinalCounts): string {
  const burns = nonFinal.queued - Math.min(nonFinal.notPackaged, nonFinal.queued);
  const head = `not final yet: ${nonFinal.queued} to re-read`;
  const detail = `${nonFinal.notPackaged} not packaged, ${burns} burns awaiting their target-chain hash`;
  const line = `${head} (${detail})`;
  return line.length <= REPORT_WIDTH ? line : `${head}:\n  ${detail}`;
}

/**
 * The report's last lines: where the status page is, or how to get one. `serving` is the
 * HTTP surface's URL under `demo --serve`.
 */
export function statusPageLines(input: {
  serving?: string;
  port: number;
  syncEverySeconds: number;
}): string[] {
  if (input.serving === undefined) {
    return [
      'the status page, live as records arrive: npx ledger-indexer demo --serve, then open',
      `  http://127.0.0.1:${input.port}/ (also /health, /ready, /status and /metrics)`,
    ];
  }
  return [
    `status page: ${input.serving}/ (also /health, /ready, /status and /metrics)`,
    `the ledger's own API from the mirror: ${input.serving}/txs?count=10, /tx/{hash}, /fees…`,
    `the change feed, records and their changes in commit order: ${input.serving}/feed`,
    `syncing every ${input.syncEverySeconds} s as records arrive; Ctrl-C to stop`,
  ];
}
