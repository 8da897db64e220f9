/**
 * The database ceiling: the same rows `COPY`ed into the empty `ledger_transactions` of a fresh,
 * migrated database (same columns, same indexes). The COPY text is prepared before the clock
 * starts, so only PostgreSQL's side is timed.
 */

import { once } from 'node:events';
import { createReadStream, createWriteStream, rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { pipeline } from 'node:stream/promises';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { type ThroughputRun, throughput } from './figures.js';
import { copyLine, encodeRow, TX_COLUMNS, type WireRecord } from './row-encoding.js';

export async function runDbCeiling(input: {
  truthFile: string;
  databaseUrl: string;
  expectedRows: number;
}): Promise<ThroughputRun> {
  const copyFile = `${input.truthFile}.copy`;
  try {
    await writeCopyText(input.truthFile, copyFile);
    const client = new pg.Client({ connectionString: input.databaseUrl });
    client.on('error', () => undefined);
    await client.connect();
    try {
      const started = performance.now();
      const sink = client.query(copyFrom(`COPY ledger_transactions (${TX_COLUMNS.join(', ')}) FROM STDIN`));
      await pipeline(createReadStream(copyFile, { highWaterMark: 1 << 20 }), sink);
      const wallMs = performance.now() - started;
      const rows = await client.query<{ n: string }>('SELECT count(*)::text AS n FROM ledger_transactions');
      return throughput({
        label: 'database ceiling: COPY of the same rows into an empty ledger_transactions',
        rows: Number(rows.rows[0]?.n ?? 0),
        expectedRows: input.expectedRows,
        wallMs,
        pagesRequested: null,
        peakRssBytes: null,
      });
    } finally {
      await client.end();
    }
  } finally {
    rmSync(copyFile, { force: true });
  }
}

async function writeCopyText(truthFile: string, copyFile: string): Promise<void> {
  const out = createWriteStream(copyFile);
  const now = new Date().toISOString();
  let buffer = '';
  for await (const line of createInterface({ input: createReadStream(truthFile), crlfDelay: Infinity })) {
    if (line === '') continue;
    buffer += copyLine(encodeRow(JSON.parse(line) as WireRecord, now));
    if (buffer.length > 1 << 20) {
      if (!out.write(buffer)) await once(out, 'drain');
      buffer = '';
    }
  }
  out.end(buffer);
  await once(out, 'finish');
}
