import { delayedSignal } from '../../abort.js';
import type { SyncResult } from '../../app/sync-once.js';
import { type Config, ENV, parseAccounts } from '../../config.js';
import { ConfigError, ServiceMismatchError } from '../../errors.js';
import type { CommandIo } from '../command.js';
import { defineCommand } from '../define-command.js';
import { createProgress } from '../progress.js';
import { failureLine, signalExitCode, stoppedLine } from '../run-outcome.js';

/** After SIGINT/SIGTERM, how long the pages in flight get to arrive before their requests are abandoned. */
const REQUEST_GRACE_MS = 2000;

const usage = `Usage: ledger-indexer sync [options]

Brings the database up to date with the service, once: migrates, refreshes tokens from /info,
backfills streams never synced (resuming an interrupted walk) and tails the others, then
re-reads records that are not final yet. With no --account it syncs the global list.

Options:
  --base-url URL          the ledger service (default: $${ENV.ledgerBaseUrl})
  --paging MODE           list dialect: key, page or auto (asks the service once)
                          (default: $${ENV.ledgerPaging}, else auto)
  --count N               records asked per key-paging request, 10..1000
                          (default: $${ENV.ledgerPageCount}, else 100; halved when refused)
  --list-url URL          the host of the lists and single look-ups
                          (default: $${ENV.ledgerListUrl}, else the base URL)
  --account ID            sync this account's list; repeat for several
  --token-tag TAG         only records of this token
  --action ACTION         only records of this action (mint, transfer, burn, bundle, ...)
  --without-action ACTION leave out records of this action
  --full                  read the whole list again instead of stopping at the watermark
  --recheck-after-ms MS   re-read records not final yet last read longer than this
                          before the run begins (default: $${ENV.recheckAfterMs}, else 2000)
  --check-signatures      also recover each EVM sender's signature to its from address
                          (default: $${ENV.checkSignatures}, else false; the hash is always checked)
  --writers N             a first backfill in lanes, one database connection each (1: one walk)
                          (default: $${ENV.writers}, else 2)
  --adopt-service         sync this service even though the database mirrors another one, and
                          recognise the database by this service from now on (the records it
                          holds stay; without it such a run is refused, exit 2)

Exit codes: 0 up to date; 1 the service or the database failed (checkpoints kept, the next
run resumes); 2 bad flags or settings, or the database mirrors another service (see
--adopt-service); 130/143 stopped by SIGINT/SIGTERM after the pages in flight (requests still
unanswered ${REQUEST_GRACE_MS / 1000} s later are abandoned; a second signal exits at once).`;

export const command = defineCommand({
  name: 'sync',
  usage,
  flags: {
    'base-url': { type: 'string' },
    paging: { type: 'string' },
    count: { type: 'string' },
    'list-url': { type: 'string' },
    account: { type: 'string', multiple: true },
    'token-tag': { type: 'string' },
    action: { type: 'string' },
    'without-action': { type: 'string' },
    full: { type: 'boolean' },
    'recheck-after-ms': { type: 'string' },
    'check-signatures': { type: 'boolean' },
    writers: { type: 'string' },
    'adopt-service': { type: 'boolean' },
  },
  async run({ values, io, config: loadConfig, logger: createLogger, onClose }) {
    const config = loadConfig({
      ledgerBaseUrl: values['base-url'],
      ledgerPaging: values.paging,
      ledgerPageCount: values.count,
      ledgerListUrl: values['list-url'],
      recheckAfterMs: values['recheck-after-ms'],
      checkSignatures: values['check-signatures'] ? 'true' : undefined,
      writers: values.writers,
    });
    requireBaseUrl(config);
    const accounts = parseAccounts(values.account, '--account');
    for (const name of ['token-tag', 'action', 'without-action'] as const) {
      const value = values[name];
      const list = Array.isArray(value) ? value : value === undefined ? [] : [value];
      if (list.some((v) => v.trim() === '')) throw new ConfigError(`--${name}`, 'must not be empty');
    }
    const logger = createLogger(quietOnTerminal(config, io));
    const { createContext } = await import('../../app/context.js');
    const { syncOnce } = await import('../../app/sync-once.js');
    const started = Date.now();
    const ctx = await createContext({ config, logger });
    onClose(() => ctx.close());
    const { holdRunnerLock } = await import('../../db/stores/runner-lock.js');
    const { releaseDeadLeases } = await import('../stale-leases.js');
    const { leaseOwnerName } = await import('../../domain/lease-owner.js');
    // Held before the first lease and until the end: while this run lives, no other takes its
    // leases, and a later run on this host can tell from the owner's liveness lock that it died.
    const owner = leaseOwnerName('sync');
    const runnerLock = await holdRunnerLock(ctx.database, owner);
    onClose(() => runnerLock.release());
    if (ctx.database.kind === 'postgres' && !runnerLock.held)
      logger.warn({ owner }, 'liveness lock not taken: a run started later may take this one for dead');
    await releaseDeadLeases({ database: ctx.database, store: ctx.store, logger });
    const progress = createProgress({ out: io.stderr, tty: io.stderr.isTTY === true });
    const result = await syncOnce(ctx, {
      accounts,
      tokenTag: values['token-tag'],
      action: values.action,
      withoutAction: values['without-action'],
      full: values.full,
      adoptService: values['adopt-service'],
      owner,
      signal: io.signal,
      requestSignal: delayedSignal(io.signal, REQUEST_GRACE_MS),
      onPage: (event) => progress.page(event),
    });
    progress.done();
    // No feed server may run beside a sync from cron: its records reach the feed's readers now.
    const { catchUpFeed } = await import('../../feed/feed-store.js');
    const feed = await catchUpFeed(ctx.database, { retentionMs: config.feedRetentionMs });
    logger.info({ stamped: feed.stamped, expired_events: feed.expired }, 'feed: caught up');
    io.stdout.write(`${summarise(result, Date.now() - started)}\n`);
    return result.stopped ? signalExitCode(io.signal) : 0;
  },
  fail(error, { io, logger }) {
    // The abandoned requests reject with the signal's own reason.
    if (io.signal.aborted && error === io.signal.reason) {
      io.stderr.write(
        `ledger-indexer sync: ${stoppedLine(io.signal)}, requests in flight abandoned; checkpoints kept, the next run resumes\n`,
      );
      return signalExitCode(io.signal);
    }
    logger().error({ err: error }, 'sync failed');
    io.stderr.write(`ledger-indexer sync: ${failureLine(error, { resumes: true })}\n`);
    if (io.signal.aborted) return signalExitCode(io.signal);
    // Not a failure the next run gets past: the settings name another service than the mirror's.
    return error instanceof ServiceMismatchError ? 2 : 1;
  },
});

/** Without a base URL, the one-line error names both ways to give it. */
export function requireBaseUrl(config: Config): asserts config is Config & { ledgerBaseUrl: string } {
  if (config.ledgerBaseUrl === undefined) {
    throw new ConfigError(`--base-url`, `is required (or set ${ENV.ledgerBaseUrl})`);
  }
}

/** Info logs would tear the progress bar: on a terminal, only warnings unless LOG_LEVEL says otherwise. */
export function quietOnTerminal(config: Config, io: CommandIo): string {
  return io.stderr.isTTY === true && io.env[ENV.logLevel] === undefined ? 'warn' : config.logLevel;
}

function summarise(result: SyncResult, elapsedMs: number): string {
  const lines = result.streams.map((walk) => {
    const state = walk.finished
      ? `up to date, watermark ${walk.watermark}`
      : 'stopped mid-walk (resumes next run)';
    return (
      `${walk.key}: ${walk.mode}, ${walk.dialect === 'key' ? `${walk.pages} requests by key` : `${walk.pages} pages`}, ${walk.records} records ` +
      `(${walk.counts.inserted} new, ${walk.counts.updated} changed, ${walk.counts.rejected} rejected` +
      `${conflictNote(walk.counts.conflicts)}); ${state}`
    );
  });
  if (result.reread) {
    const r = result.reread;
    lines.push(
      `pending re-reads: ${r.checked} checked, ${r.counts.updated} changed, ${r.missing} gone, ${r.failed} failed` +
        conflictNote(r.counts.conflicts),
    );
  }
  lines.push(`${result.stopped ? 'stopped' : 'done'} in ${(elapsedMs / 1000).toFixed(1)}s`);
  return lines.join('\n');
}

/** Conflicts are rare and serious: named only when there are some, with where to look. */
function conflictNote(conflicts: number): string {
  return conflicts === 0
    ? ''
    : `, ${conflicts} conflicting (served with other immutable fields; stored kept, see ledger_tx_conflicts)`;
}
