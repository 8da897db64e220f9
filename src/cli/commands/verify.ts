import type { ListDialect } from '../../client/api-types.js';
import { ENV } from '../../config.js';
import type { Database } from '../../db/connect.js';
import { resolveDigestQuery } from '../../digest/range-digest.js';
import { ConfigError, UsageError } from '../../errors.js';
import type { BalanceReport } from '../../verify/balance-check.js';
import type { StreamCompleteness } from '../../verify/completeness-report.js';
import { intFlag } from '../command.js';
import { type CommandContext, commandFailure, defineCommand } from '../define-command.js';
import { digestQueryFlags } from '../digest-flags.js';

const usage = `Usage: ledger-indexer verify [options]

Completeness report against the service, per stream (global, account and filtered lists alike):
the rawId ranges proven stored, unproven gaps below the watermark, the list's exact count at or
below the watermark against the table's (page 1 and the last page; where they differ, a
bisection over the pages names the missing rawIds, O(log pages) requests), records the table
lacks found by walking the list when it has at most --walk-limit pages, and the rawId holes of
the global list (shown absent from the service by the count or the walk, or said to be
unproven); then the conflicts: records served again with immutable fields (amount, accounts,
hash, signature…) different from the stored ones; then the integrity checks: each record's
ledgerHash recomputed from its 13 signed fields, and (when written with --check-signatures) its
signature recovered to its from address.

By key (--paging key, or auto where the service answers in the key dialect), each list is
walked once, ascending from the bottom, --count records a request (a server that answers fewer
is followed from the last rawId), and each answer is compared with the table's records of the
same rawId span: listed rawIds the table lacks are missing, rawIds the table holds in the span
that the service did not list are named too, and listed records whose immutable fields differ
from the stored ones are named with the fields. Records above the watermark are counted as not
synced yet. --walk-limit counts only by page numbers.

The count adds up: listed = table (stored, or set aside in rejected_records with a readable
rawId and the reason) + served without a readable rawId + missing. Records served without a
readable rawId cannot be keyed, so no table can hold them (a sync keeps their text in
rejected_records): they are counted exactly, apart (the bisection reads the pages around
each of them, up to about the whole list), and do not make a stream incomplete.

With --against, it also compares the stored records with another copy, field by field, through
their digests (see 'ledger-indexer digest --help'): range by range, and each differing range
narrowed down to its first differing rawId, named as missing on one side or with the fields
that differ (at most 100 ranges are narrowed down; the others are listed). Without --base-url
and LEDGER_BASE_URL, --against runs alone: the comparison needs no service, and this mirror is
only read, never migrated.

Options:
  --base-url URL          the ledger service (default: $${ENV.ledgerBaseUrl})
  --paging MODE           list dialect: key, page or auto (asks the service once)
                          (default: $${ENV.ledgerPaging}, else auto)
  --count N               records asked per key-paging request, 10..1000
                          (default: $${ENV.ledgerPageCount}, else 100; halved when refused)
  --list-url URL          the host of the lists and single look-ups
                          (default: $${ENV.ledgerListUrl}, else the base URL)
  --against URL           the other copy: http(s)://… a simulator (its /_sim/digest), or
                          postgres://… another mirror's database (opened read-only)
  --from R, --to R        compare the rawIds from R to R only (with --against; default all)
  --range-size N          rawIds per compared range, 1..100000000 (with --against; default 10000)
  --json                  the report as JSON (the comparison under "against")
  --walk-limit N          also read a list record by record when it has at most N pages, 0..100000
                          (default 200; the count runs whatever the list's length)
  --balances N            also compare, for the N accounts with the most stored records, the
                          balances the stored movements imply (ledger_account_balances) with the
                          service's /balances/{account}, 1..100000; run it right after a sync

Exit codes: 0 every stream complete (or settling: records shown late above its settled mark, which
a later sync reads), no conflict recorded, no integrity mismatch, balances and
copies equal; 1 a stream is incomplete, a conflict is recorded, a record is not what its sender
signed, a balance or the copies differ (or the service or a database failed); 2 bad flags;
130/143 stopped by SIGINT/SIGTERM. Requests to the service and to a simulator given with
--against wait at most $${ENV.requestTimeoutMs} a try and are retried $${ENV.retries} times.
Each completeness report's time and outcome is stored in verify_runs (the status page shows
the last one). A mirror whose schema is current is only read: on a read-only database (a
standby, default_transaction_read_only, a role granted SELECT alone) that record and the build
of deferred indexes are skipped with a warning; a schema that is behind is migrated, or said to
be behind in one line when the database refuses the migration.`;

/** Conflicts listed with both versions; the total is always given. */
const CONFLICTS_LISTED = 50;

const flags = {
  'base-url': { type: 'string' },
  paging: { type: 'string' },
  count: { type: 'string' },
  'list-url': { type: 'string' },
  json: { type: 'boolean' },
  'walk-limit': { type: 'string' },
  against: { type: 'string' },
  from: { type: 'string' },
  to: { type: 'string' },
  'range-size': { type: 'string' },
  balances: { type: 'string' },
} as const;

type Context = CommandContext<typeof flags>;

export const command = defineCommand({
  name: 'verify',
  usage,
  flags,
  async run(ctx) {
    const { values, io } = ctx;
    const walkLimit = intFlag('walk-limit', values['walk-limit'], 0, 100_000) ?? 200;
    const balances = intFlag('balances', values.balances, 1, 100_000);
    const { parseAgainst, sideNames, verifyAgainst } = await import('../../app/verify/verify-against.js');
    const against = values.against === undefined ? undefined : parseAgainst(values.against);
    const rangeFlag = (['from', 'to', 'range-size'] as const).find((name) => values[name] !== undefined);
    if (against === undefined && rangeFlag !== undefined)
      throw new UsageError(`--${rangeFlag} needs --against`);
    const query = resolveDigestQuery(digestQueryFlags(values));
    const config = ctx.config({
      ledgerBaseUrl: values['base-url'],
      ledgerPaging: values.paging,
      ledgerPageCount: values.count,
      ledgerListUrl: values['list-url'],
    });
    if (config.ledgerBaseUrl === undefined && against === undefined)
      throw new ConfigError(
        '--base-url',
        `is required (or set ${ENV.ledgerBaseUrl}), unless --against is given`,
      );
    if (config.ledgerBaseUrl === undefined && balances !== undefined)
      throw new ConfigError('--base-url', `is required with --balances (or set ${ENV.ledgerBaseUrl})`);
    const logger = ctx.logger(config.logLevel === 'info' ? 'warn' : config.logLevel);
    const { database, report } =
      config.ledgerBaseUrl === undefined
        ? { database: await openForReading(ctx), report: null }
        : await completeness(ctx, walkLimit, balances);
    const comparison =
      against === undefined
        ? null
        : await verifyAgainst({ mirror: database, against, query, config, logger, signal: io.signal });
    const lines: string[] = report?.text ?? [];
    if (comparison !== null && against !== undefined) {
      const { formatComparison } = await import('../../digest/digest-report.js');
      lines.push(...formatComparison(comparison, sideNames(against)));
    }
    const json = {
      ...(report === null ? {} : report.json),
      ...(comparison === null ? {} : { against: comparison }),
    };
    io.stdout.write(values.json ? `${JSON.stringify(json, null, 2)}\n` : `${lines.join('\n')}\n`);
    const complete = report === null || report.json.complete;
    return complete && (comparison === null || comparison.equal) ? 0 : 1;
  },
  // Stopped by a signal: 130/143 like every command; else the error's message as it is.
  fail(error, { io }) {
    if (io.signal.aborted) return commandFailure('verify', error, io);
    io.stderr.write(`ledger-indexer verify: ${error instanceof Error ? error.message : String(error)}\n`);
    return 1;
  },
});

/** The completeness report against the service, and the database it read (migrated first when behind). */
async function completeness(
  { config, logger, onClose, io }: Context,
  walkLimit: number,
  balanceAccounts: number | undefined,
): Promise<{
  database: Database;
  report: {
    text: string[];
    json: {
      complete: boolean;
      /** How the service's lists were read. */
      dialect: ListDialect;
      streams: StreamCompleteness[];
      conflicts: unknown;
      integrity: unknown;
      balances?: BalanceReport;
    };
  };
}> {
  const startedAt = new Date();
  const { createContext } = await import('../../app/context.js');
  const { verifyStreams } = await import('../../app/verify/verify-streams.js');
  const { migrateIfBehind, writeUnlessReadOnly } = await import('../../app/read-only-mirror.js');
  const warn = (line: string) => io.stderr.write(`ledger-indexer verify: warning: ${line}\n`);
  // Verifying only reads: a mirror whose schema is current (a standby, a read-only role) is never written to.
  const app = await createContext({ config: config(), logger: logger(), migrate: false });
  onClose(() => app.close());
  await migrateIfBehind(app.database);
  // A first backfill stopped before its end left the read-side indexes deferred: built first.
  await writeUnlessReadOnly('building the deferred read-side indexes', () => app.indexes.restore(), warn);
  const { dialect, streams } = await verifyStreams({ app, walkLimit, signal: io.signal });
  const { readConflicts } = await import('../../db/queries/conflicts.js');
  const conflicts = await readConflicts(app.database.db, CONFLICTS_LISTED);
  const { readIntegrity } = await import('../../db/queries/integrity-checks.js');
  const integrity = await readIntegrity(app.database.db, CONFLICTS_LISTED);
  const { formatCompleteness, formatConflicts } = await import('../../verify/completeness-report.js');
  const { formatIntegrity, integrityHolds } = await import('../../verify/integrity-report.js');
  const { verifyBalances } = await import('../../app/verify/verify-balances.js');
  const { formatBalances } = await import('../../verify/balance-check.js');
  const balances =
    balanceAccounts === undefined
      ? undefined
      : await verifyBalances({ app, accounts: balanceAccounts, signal: io.signal });
  const complete =
    allComplete(streams) &&
    conflicts.total === 0 &&
    integrityHolds(integrity) &&
    (balances === undefined || balances.differences.length === 0);
  // The status page shows the last one: its time and outcome.
  const { insertVerifyRun } = await import('../../db/queries/verify-runs.js');
  const run = {
    startedAt,
    finishedAt: new Date(),
    complete,
    summary: {
      streams: streams.length,
      incompleteStreams: streams.filter((s) => !s.complete).map((s) => s.stream),
      streamProblems: Object.fromEntries(
        streams.filter((s) => !s.complete).map((s) => [s.stream, s.problems]),
      ),
      conflicts: conflicts.total,
      integrityMismatches: integrity.mismatchTotal,
      balanceDifferences: balances === undefined ? null : balances.differences.length,
    },
  };
  await writeUnlessReadOnly(
    'storing this report in verify_runs',
    () => insertVerifyRun(app.database.db, run),
    warn,
  );
  return {
    database: app.database,
    report: {
      text: [
        formatCompleteness(streams),
        ...formatConflicts(conflicts),
        ...formatIntegrity(integrity),
        ...(balances === undefined ? [] : formatBalances(balances)),
      ],
      json: {
        complete,
        dialect,
        streams,
        conflicts,
        integrity,
        ...(balances === undefined ? {} : { balances }),
      },
    },
  };
}

/** This mirror, opened read-only for a comparison alone: looking never migrates it. */
async function openForReading({ config, logger, onClose }: Context): Promise<Database> {
  const { openDatabase } = await import('../../db/connect.js');
  const { assertMigrated } = await import('../../app/verify/verify-against.js');
  const { databaseUrl, dataDir } = config();
  const database = await openDatabase({
    databaseUrl,
    dataDir,
    logger: logger(),
    readOnly: true,
    maxConnections: 2,
  });
  onClose(() => database.close());
  await assertMigrated(database, 'this mirror');
  return database;
}

function allComplete(reports: readonly StreamCompleteness[]): boolean {
  return reports.length > 0 && reports.every((r) => r.complete);
}
