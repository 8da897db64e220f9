import { ENV } from '../../config.js';
import { ConfigError } from '../../errors.js';
import type { StreamCompleteness } from '../../sync/completeness-report.js';
import { intFlag } from '../command.js';
import { defineCommand } from '../define-command.js';

const usage = `Usage: ledger-indexer verify [options]

Completeness report against the service, per stream: the rawId ranges proven stored, unproven
gaps below the watermark, rawId holes proven absent (numbers the service never used), the
records in the table against the service's count (bounds from totalPages, or exact by walking
the list when it has at most --walk-limit pages); then the conflicts: records served again with
immutable fields (amount, accounts, hash, signature…) different from the stored ones; then the
integrity checks: each record's ledgerHash recomputed from its 13 signed fields, and (when
written with --check-signatures) its signature recovered to its from address.

Options:
  --base-url URL          the ledger service (default: $${ENV.ledgerBaseUrl})
  --json                  the report as JSON
  --walk-limit N          count the service's records exactly when a list has at most N pages, 0..100000
                          (default 200)

Exit codes: 0 every stream complete, no conflict recorded and no integrity mismatch; 1 a stream
is incomplete, a conflict is recorded, a record is not what its sender signed (or the service
failed); 2 bad flags.`;

/** Conflicts listed with both versions; the total is always given. */
const CONFLICTS_LISTED = 50;

export const command = defineCommand({
  name: 'verify',
  usage,
  flags: {
    'base-url': { type: 'string' },
    json: { type: 'boolean' },
    'walk-limit': { type: 'string' },
  },
  async run({ values, io, config: loadConfig, logger, onClose }) {
    const walkLimit = intFlag('walk-limit', values['walk-limit'], 0, 100_000) ?? 200;
    const config = loadConfig({ ledgerBaseUrl: values['base-url'] });
    if (config.ledgerBaseUrl === undefined)
      throw new ConfigError('--base-url', `is required (or set ${ENV.ledgerBaseUrl})`);
    const log = logger(config.logLevel === 'info' ? 'warn' : config.logLevel);
    const { createContext } = await import('../../app/context.js');
    const { verifyStreams } = await import('../../app/verify-streams.js');
    const ctx = await createContext({ config, logger: log });
    onClose(() => ctx.close());
    const reports = await verifyStreams({ app: ctx, walkLimit, signal: io.signal });
    const { readConflicts } = await import('../../db/conflicts.js');
    const conflicts = await readConflicts(ctx.database.db, CONFLICTS_LISTED);
    const { readIntegrity } = await import('../../db/integrity.js');
    const integrity = await readIntegrity(ctx.database.db, CONFLICTS_LISTED);
    const { formatCompleteness, formatConflicts } = await import('../../sync/completeness-report.js');
    const { formatIntegrity, integrityHolds } = await import('../../sync/integrity-report.js');
    const complete = allComplete(reports) && conflicts.total === 0 && integrityHolds(integrity);
    io.stdout.write(
      values.json
        ? `${JSON.stringify({ complete, streams: reports, conflicts, integrity }, null, 2)}\n`
        : `${[formatCompleteness(reports), ...formatConflicts(conflicts), ...formatIntegrity(integrity)].join('\n')}\n`,
    );
    return complete ? 0 : 1;
  },
  // The error's message as it is, whether or not a signal stopped the run.
  fail(error, { io }) {
    io.stderr.write(`ledger-indexer verify: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  },
});

function allComplete(reports: readonly StreamCompleteness[]): boolean {
  return reports.length > 0 && reports.every((r) => r.complete);
}
