import { DatabaseError } from '../../errors.js';
import { commandFailure, defineCommand } from '../define-command.js';
import { digestQueryFlags } from '../digest-flags.js';

const usage = `Usage: ledger-indexer digest [--from R] [--to R] [--range-size N] [--json]

A hash of the stored records per fixed range of rawIds, to tell where two copies of the ledger
differ (two mirrors, or a mirror and the simulator's GET /_sim/digest, which answers the same
for the same records). Range k holds the rawIds from k × N to (k + 1) × N − 1; ranges without a
record are left out. A range's hash is the sha256 of its records' canonical lines, in rawId
order, joined by newlines: each line is a JSON array of rawId, the 13 signed fields, sig,
ledgerHash, status, id, timestamp, internalStatus, targetChainTxHash and the four express
fields (amount, fee and nonce without leading zeros). The digest is the sha256 of the range
hashes joined by newlines. 'verify --against' compares two copies and names the records.

Reads DATABASE_URL (or the embedded database) and never writes to it.

Options:
  --from R          first rawId covered (default 0)
  --to R            last rawId covered, included (default: no bound)
  --range-size N    rawIds per range, 1..100000000 (default 10000)
  --json            the digest as JSON: { rangeSize, from, to, count, hash, ranges: [{ from, to, count, hash }] }

Exit codes: 0 printed; 1 the database failed or is not migrated; 2 bad flags.`;

export const command = defineCommand({
  name: 'digest',
  usage,
  flags: {
    from: { type: 'string' },
    to: { type: 'string' },
    'range-size': { type: 'string' },
    json: { type: 'boolean' },
  },
  async run({ values, io, config: loadConfig, logger: createLogger, onClose }) {
    const query = digestQueryFlags(values);
    const config = loadConfig();
    const logger = createLogger(config.logLevel === 'info' ? 'warn' : config.logLevel);
    const { openDatabase } = await import('../../db/connect.js');
    const { assertMigrated } = await import('../../app/verify/verify-against.js');
    const { digestStoredRecords } = await import('../../db/queries/digest-rows.js');
    const { formatDigest } = await import('../../digest/digest-report.js');
    const database = await openDatabase({
      databaseUrl: config.databaseUrl,
      dataDir: config.dataDir,
      logger,
      readOnly: true,
      maxConnections: 1,
    });
    onClose(() => database.close());
    await assertMigrated(database, 'the database');
    const digest = await digestStoredRecords(database.db, query, { signal: io.signal });
    io.stdout.write(
      values.json ? `${JSON.stringify(digest, null, 2)}\n` : `${formatDigest(digest).join('\n')}\n`,
    );
    return 0;
  },
  // Nothing is resumed after a failure here: the database's failure in its words, and exit 1.
  fail(error, { io }) {
    if (io.signal.aborted || !(error instanceof DatabaseError)) return commandFailure('digest', error, io);
    io.stderr.write(`ledger-indexer digest: the database failed: ${error.message}\n`);
    return 1;
  },
});
