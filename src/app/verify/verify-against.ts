/**
 * `verify --against`: this mirror's digest compared with another copy's, a simulator (its
 * `/_sim/digest`) or another mirror database (opened read-only), each differing range narrowed
 * down to its first differing record.
 */
import { createSimDigestClient } from '../../client/sim-digest.js';
import { type Config, redactUrl } from '../../config.js';
import { type Database, openDatabase } from '../../db/connect.js';
import { digestStoredRecords } from '../../db/queries/digest-rows.js';
import { readMigrationState } from '../../db/schema/migrate-database.js';
import { compareDigests, type DigestComparison, type DigestSource } from '../../digest/compare-digests.js';
import type { SideNames } from '../../digest/digest-report.js';
import type { ResolvedDigestQuery } from '../../digest/range-digest.js';
import { LedgerIndexerError, UsageError } from '../../errors.js';
import type { Logger } from '../../logger.js';

/** The other copy: a simulator's base URL, or another mirror's PostgreSQL URL. */
export interface AgainstTarget {
  kind: 'simulator' | 'database';
  url: string;
}

/** A comparison with the other copy, as `verify --json` prints it under `against`. */
export interface AgainstReport extends DigestComparison {
  kind: AgainstTarget['kind'];
  /** The other copy's URL, its password masked. */
  target: string;
}

/** Reads `--against`: `http(s)://…` is a simulator, `postgres(ql)://…` another mirror. */
export function parseAgainst(value: string): AgainstTarget {
  const problem = `--against must be the http(s):// URL of a simulator or the postgres:// URL of another mirror (got '${redactUrl(value)}')`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new UsageError(problem);
  }
  if (url.protocol === 'postgres:' || url.protocol === 'postgresql:') return { kind: 'database', url: value };
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new UsageError(problem);
  if (url.search !== '' || url.hash !== '')
    throw new UsageError(
      `--against must be the simulator's base URL, without a query (got '${redactUrl(value)}')`,
    );
  return { kind: 'simulator', url: value.replace(/\/+$/, '') };
}

/** How the text report names the two sides. */
export function sideNames(target: AgainstTarget): SideNames {
  return { mirror: 'this mirror', other: target.kind === 'simulator' ? 'the simulator' : 'the other mirror' };
}

/** A mirror database as one side of a comparison. */
export function databaseDigestSource(database: Database, signal?: AbortSignal): DigestSource {
  return {
    digest: (query, options) => digestStoredRecords(database.db, query, { lines: options?.lines, signal }),
  };
}

/** Fails with one line when `database` lacks migrations: its table would not be there to read. */
export async function assertMigrated(database: Database, which: string): Promise<void> {
  const { applied, expected } = await readMigrationState(database);
  if (applied < expected) {
    throw new LedgerIndexerError(
      `${which} is not migrated (${applied} of ${expected} migrations applied); run 'ledger-indexer migrate' or 'sync' on it first`,
    );
  }
}

/** Compares `mirror` with the other copy over `query`; the other copy is opened and closed here. */
export async function verifyAgainst(input: {
  mirror: Database;
  against: AgainstTarget;
  query: ResolvedDigestQuery;
  config: Config;
  logger: Logger;
  signal: AbortSignal;
}): Promise<AgainstReport> {
  const { against, signal } = input;
  const target = redactUrl(against.url);
  const name = `${sideNames(against).other} (${target})`;
  const mirror = namedFailures(databaseDigestSource(input.mirror, signal), sideNames(against).mirror);
  const compare = (other: DigestSource) =>
    compareDigests({ mirror, other: namedFailures(other, name), query: input.query, signal });
  if (against.kind === 'simulator') {
    // The same request deadline and retries as every request to the service (`sync`'s).
    const { requestTimeoutMs, retries, retryMinMs, retryMaxMs, maxRetryWaitMs } = input.config;
    const client = createSimDigestClient({
      baseUrl: against.url,
      timeoutMs: requestTimeoutMs,
      retries,
      retryMinMs,
      retryMaxMs,
      maxRetryWaitMs,
      logger: input.logger,
    });
    try {
      const other: DigestSource = {
        digest: (query, options) => client.digest(query, { ...options, signal }),
      };
      return { kind: against.kind, target, ...(await compare(other)) };
    } finally {
      await client.close();
    }
  }
  const database = await openDatabase({
    databaseUrl: against.url,
    readOnly: true,
    maxConnections: 2,
    logger: input.logger,
  });
  try {
    await namedFailure(name, () => assertMigrated(database, name));
    return { kind: against.kind, target, ...(await compare(databaseDigestSource(database, signal))) };
  } finally {
    await database.close();
  }
}

/** The source, its failures prefixed with the side's name, so one line says which copy failed. */
function namedFailures(source: DigestSource, name: string): DigestSource {
  return { digest: (query, options) => namedFailure(name, () => source.digest(query, options)) };
}

async function namedFailure<T>(name: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof Error && error.name === 'AbortError') throw error;
    const message = error instanceof Error ? error.message : String(error);
    throw new LedgerIndexerError(message.startsWith(name) ? message : `${name}: ${message}`, {
      cause: error,
      retryable: error instanceof LedgerIndexerError && error.retryable,
    });
  }
}
