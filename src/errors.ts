/**
 * The typed error tree. Code classifies failures by class and fields (status, retryable),
 * never by message text. Every error keeps its `cause`.
 */

/** Base class of every error ledger-indexer raises on purpose. */
export class LedgerIndexerError extends Error {
  /** Whether repeating the same operation later may succeed. */
  readonly retryable: boolean;

  constructor(message: string, options: { cause?: unknown; retryable?: boolean } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.retryable = options.retryable ?? false;
  }
}

/** A setting (environment variable, flag or config field) has a bad value. Exit code 2. */
export class ConfigError extends LedgerIndexerError {
  readonly setting: string;

  constructor(setting: string, problem: string) {
    super(`${setting}: ${problem}`);
    this.setting = setting;
  }
}

/** The command line itself is wrong (unknown command, bad flag). Exit code 2. */
export class UsageError extends LedgerIndexerError {}

/** The ledger service answered with a non-2xx status. */
export class HttpError extends LedgerIndexerError {
  readonly status: number;
  /** The response body as text (possibly truncated). */
  readonly body: string;
  /** The service's `{"error": "err_..."}` code when the body carried one. */
  readonly serviceError: string | undefined;
  readonly url: string;
  /** Milliseconds the service asked us to wait (`Retry-After`), when it said. */
  readonly retryAfterMs: number | undefined;

  constructor(init: { status: number; body: string; url: string; retryAfterMs?: number | undefined }) {
    const serviceError = parseServiceError(init.body);
    super(`HTTP ${init.status} from ${init.url}${serviceError ? `: ${serviceError}` : ''}`, {
      retryable: isRetryableStatus(init.status),
    });
    this.status = init.status;
    this.body = init.body;
    this.serviceError = serviceError;
    this.url = init.url;
    this.retryAfterMs = init.retryAfterMs;
  }
}

/**
 * The service asked (`Retry-After`) for a longer wait than `LEDGER_MAX_RETRY_WAIT_MS` allows: the
 * run ends at once rather than sleep through it or retry before the service said it may.
 */
export class RetryWaitTooLongError extends LedgerIndexerError {
  /** What the service asked for, ms. */
  readonly waitMs: number;
  /** The longest wait allowed, ms. */
  readonly maxWaitMs: number;

  constructor(init: { waitMs: number; maxWaitMs: number; cause: HttpError }) {
    super(
      `the service asks to wait ${seconds(init.waitMs)} before the next request (HTTP ${init.cause.status}, ` +
        `Retry-After), longer than LEDGER_MAX_RETRY_WAIT_MS allows (${seconds(init.maxWaitMs)})`,
      { cause: init.cause },
    );
    this.waitMs = init.waitMs;
    this.maxWaitMs = init.maxWaitMs;
  }
}

/** `86400 s (24 h)`: a wait in seconds, with hours when it is long. */
function seconds(ms: number): string {
  const s = Math.round(ms / 1000);
  return s >= 7200 ? `${s} s (${Math.round(s / 360) / 10} h)` : `${s} s`;
}

/** The request never got an answer: connection refused or reset, DNS, or a timeout. */
export class NetworkError extends LedgerIndexerError {
  readonly url: string;

  constructor(url: string, message: string, cause?: unknown) {
    super(`${message} (${url})`, { cause, retryable: true });
    this.url = url;
  }
}

/** The request, its body included, took longer than the configured total deadline. */
export class TimeoutError extends NetworkError {}

/**
 * A 2xx answer whose body is not what the endpoint promises (not JSON, truncated, page fields
 * missing). Retried like any transient failure (truncation usually is), then raised.
 */
export class MalformedResponseError extends LedgerIndexerError {
  readonly url: string;
  readonly body: string;

  constructor(url: string, problem: string, body: string) {
    super(`malformed response from ${url}: ${problem}`, { retryable: true });
    this.url = url;
    this.body = body.length > 2000 ? `${body.slice(0, 2000)}…` : body;
  }
}

/**
 * The answer's body grew past the configured size limit and was cut off: a broken or hostile
 * peer must not fill the memory. Retried like a truncated body.
 */
export class ResponseTooLargeError extends MalformedResponseError {
  /** The limit that was exceeded, in bytes. */
  readonly limitBytes: number;

  constructor(url: string, limitBytes: number) {
    super(url, `body larger than ${limitBytes} bytes, cut off`, '');
    this.limitBytes = limitBytes;
  }
}

/** One transaction record failed validation; the rest of its page is still usable. */
export class InvalidRecordError extends LedgerIndexerError {
  readonly reason: string;
  /** The record's raw JSON text. */
  readonly raw: string;

  constructor(reason: string, raw: string) {
    super(`invalid record: ${reason}`);
    this.reason = reason;
    this.raw = raw;
  }
}

/**
 * A list moved under a count so that the positions of its records could not be pinned down
 * (records kept arriving between the reads meant to bracket a page, or the list shrank).
 * Retryable: a later count usually finds a quiet moment.
 */
export class ListUnsettledError extends LedgerIndexerError {
  constructor(detail: string) {
    super(`the list could not be counted: ${detail}`, { retryable: true });
  }
}

/**
 * The stream's lease is held by another runner, or this runner's fencing number is stale:
 * its writes are refused so a checkpoint never moves backwards.
 */
export class LeaseLostError extends LedgerIndexerError {
  readonly stream: string;

  constructor(stream: string, detail: string) {
    super(`lease on stream ${stream} lost: ${detail}`);
    this.stream = stream;
  }
}

/** A record that identifies the ledger service a mirror holds: its `rawId` and `ledgerHash` never change. */
export interface ServiceAnchor {
  rawId: number;
  ledgerHash: string;
}

/**
 * The database mirrors another ledger service than the one configured: a record it holds (its
 * anchor) is unknown to the service, or the service serves another record under its hash. Not
 * retryable: the configuration is wrong, or the operator means to switch services and says so.
 */
export class ServiceMismatchError extends LedgerIndexerError {
  readonly anchor: ServiceAnchor;
  /** The configured service (password hidden). */
  readonly serviceUrl: string;
  /** The service the anchor was pinned from (password hidden), when known. */
  readonly mirroredUrl: string | undefined;

  constructor(init: {
    anchor: ServiceAnchor;
    serviceUrl: string;
    mirroredUrl?: string | undefined;
    way: string;
  }) {
    const { anchor } = init;
    const from = init.mirroredUrl === undefined ? '' : ` (${init.mirroredUrl})`;
    super(
      `the database mirrors another ledger service${from}: ${init.serviceUrl} does not know its record ` +
        `rawId ${anchor.rawId} (${anchor.ledgerHash.slice(0, 12)}…); point it at the service the ` +
        `database mirrors, use another database, or ${init.way}`,
    );
    this.anchor = anchor;
    this.serviceUrl = init.serviceUrl;
    this.mirroredUrl = init.mirroredUrl;
  }
}

/**
 * The embedded database's data folder cannot be created, written or opened. Its message is one
 * line naming the folder, the reason and what to do.
 */
export class DataFolderError extends LedgerIndexerError {
  readonly path: string;
  /** The file system's error code (`EACCES`, `ENOENT`, …), when one was given. */
  readonly code: string | undefined;

  constructor(init: { path: string; message: string; code?: string | undefined; cause?: unknown }) {
    super(init.message, { cause: init.cause });
    this.path = init.path;
    this.code = init.code;
  }
}

/** Who holds the embedded database's folder (`folder-lock.ts`). */
export interface FolderHolder {
  pid: number;
  host: string;
  /** The holder's command (`sync`, `demo`, …). */
  command: string;
  /** When it took the folder, ISO. */
  since: string;
}

/**
 * The embedded database's folder is open in another process: one process at a time may open it
 * (two would write the same files and lose each other's commits).
 */
export class DataFolderBusyError extends DataFolderError {
  readonly holder: FolderHolder;

  /** `local`: the holder runs on this host; else `lockFile` is named for deleting by hand. */
  constructor(path: string, holder: FolderHolder, where: { local: boolean; lockFile: string }) {
    const who = `${holder.command} (pid ${holder.pid}${where.local ? '' : ` on ${holder.host}`}, since ${holder.since})`;
    const remedy = where.local
      ? 'wait for it to end, or set DATABASE_URL to a PostgreSQL server, which any number of processes may share'
      : `if it no longer runs, delete ${where.lockFile}; to run several processes at once, set DATABASE_URL to a PostgreSQL server`;
    super({
      path,
      message: `the embedded database in ${path} is open in another process, ${who}: one process at a time may open it; ${remedy}`,
    });
    this.holder = holder;
  }
}

/**
 * What kind of database failure an error is, from its SQLSTATE (class or exact code) or, without
 * one, from how the connection failed. Decides the words of the message and whether a later run
 * may succeed.
 */
export type DatabaseFailureKind =
  /** The connection was lost or never made (class 08, 57P01-57P03, network errors). */
  | 'connection'
  /** The database refuses writes (25006): a standby, or `default_transaction_read_only`. */
  | 'read-only'
  /** Disk, memory or connection slots ran out (class 53, class 58). */
  | 'resources'
  /** A concurrent transaction won (serialization failure, deadlock, lock not available). */
  | 'conflict'
  /** A constraint refused a row (class 23). */
  | 'integrity'
  /** Credentials, privileges or the database itself are wrong (class 28, 42501, 3D000). */
  | 'access'
  /** The statement itself is wrong (syntax, undefined object, bad value): a bug to report. */
  | 'bug'
  /** Anything else. */
  | 'other';

/** Kinds after which the same work may succeed later (BullMQ retries the job, `sync` resumes). */
export const RETRYABLE_DATABASE_FAILURES: ReadonlySet<DatabaseFailureKind> = new Set([
  'connection',
  'read-only',
  'resources',
  'conflict',
]);

/** What a {@link DatabaseError} is built from. */
export interface DatabaseErrorInit {
  kind: DatabaseFailureKind;
  /** The failure in a few words, free of SQL text and values. */
  words: string;
  /** The SQLSTATE, when the server (or PGlite) sent one. */
  sqlstate?: string | undefined;
  /** The network error code (`ECONNREFUSED`, `ECONNRESET`, ...), when the connection failed. */
  networkCode?: string | undefined;
  /** What the database was doing, e.g. `page-write` or `migrate`; never the statement's text. */
  operation?: string | undefined;
  /** The constraint a refused row broke (a schema name, not a value). */
  constraint?: string | undefined;
  cause?: unknown;
}

/**
 * The database failed. Its message is one short line built from the SQLSTATE (or the network
 * code) and the operation, e.g. `database is read-only (SQLSTATE 25006 in migrate)`: never the
 * SQL text or its parameters, which may hold whole pages of records. The driver's error stays
 * in `cause` for debugging; logs print only the fields (see `serializeError` in logger.ts).
 */
export class DatabaseError extends LedgerIndexerError {
  readonly kind: DatabaseFailureKind;
  readonly sqlstate: string | undefined;
  readonly networkCode: string | undefined;
  readonly operation: string | undefined;
  readonly constraint: string | undefined;
  /** The failure in words, without codes (the message adds them). */
  readonly words: string;

  constructor(init: DatabaseErrorInit) {
    const code = init.sqlstate ? `SQLSTATE ${init.sqlstate}` : init.networkCode;
    const where = init.operation ? `in ${init.operation}` : undefined;
    const constraint = init.constraint ? `constraint ${init.constraint}` : undefined;
    const details = [code, where, constraint].filter(Boolean).join(' ');
    super(details ? `${init.words} (${details})` : init.words, {
      cause: init.cause,
      retryable: RETRYABLE_DATABASE_FAILURES.has(init.kind),
    });
    this.kind = init.kind;
    this.words = init.words;
    this.sqlstate = init.sqlstate;
    this.networkCode = init.networkCode;
    this.operation = init.operation;
    this.constraint = init.constraint;
  }

  /** The same failure, naming the operation it happened in (kept when one is already named). */
  during(operation: string): DatabaseError {
    if (this.operation !== undefined) return this;
    return new DatabaseError({ ...this.init(), operation });
  }

  private init(): DatabaseErrorInit {
    return {
      kind: this.kind,
      words: this.words,
      sqlstate: this.sqlstate,
      networkCode: this.networkCode,
      operation: this.operation,
      constraint: this.constraint,
      cause: this.cause,
    };
  }
}

/**
 * Redis refused the credentials of `REDIS_URL` (`WRONGPASS`), or asked for some that it does not
 * give (`NOAUTH`). Retrying cannot help, so commands stop at once. The message shows the URL with
 * its password masked; there is no `cause`, since the client's error carries the AUTH command
 * and its password.
 */
export class RedisAuthError extends LedgerIndexerError {
  /** The Redis URL with its password masked. */
  readonly url: string;

  constructor(url: string, problem: 'refused' | 'missing') {
    super(
      problem === 'refused'
        ? `Redis refused the credentials of REDIS_URL (${url})`
        : `Redis requires credentials that REDIS_URL (${url}) does not give`,
    );
    this.url = url;
  }
}

/**
 * Redis could not be reached within the attempts a command allows. `detail` is a secret-free
 * description of the last failure (no `cause`, for the same reason as {@link RedisAuthError}).
 */
export class RedisUnavailableError extends LedgerIndexerError {
  /** The Redis URL with its password masked. */
  readonly url: string;

  constructor(url: string, detail: string) {
    super(`Redis at REDIS_URL (${url}) is unreachable: ${detail}`, { retryable: true });
    this.url = url;
  }
}

/** HTTP statuses worth retrying: throttling and server-side failures. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 425 || status === 429 || status >= 500;
}

/** Whether an arbitrary thrown value is worth retrying. Unknown errors are not. */
export function isRetryable(error: unknown): boolean {
  return error instanceof LedgerIndexerError && error.retryable;
}

function parseServiceError(body: string): string | undefined {
  try {
    const parsed: unknown = JSON.parse(body);
    if (parsed && typeof parsed === 'object' && 'error' in parsed) {
      const value = (parsed as { error: unknown }).error;
      if (typeof value === 'string') return value;
    }
  } catch {
    // A non-JSON error body is possible; the text itself is kept in `body`.
  }
  return undefined;
}

/** The HTTP surface could not listen on its address (the port is taken, the address is not local…). */
export class ListenError extends LedgerIndexerError {
  readonly host: string;
  readonly port: number;
  /** The system's code, e.g. `EADDRINUSE`. */
  readonly code: string | undefined;

  constructor(init: { host: string; port: number; code: string | undefined; cause?: unknown }) {
    const why = init.code === 'EADDRINUSE' ? 'the port is already in use' : (init.code ?? 'failed');
    super(`cannot listen on ${init.host}:${init.port}: ${why}`, { cause: init.cause });
    this.host = init.host;
    this.port = init.port;
    this.code = init.code;
  }
}

/**
 * A commit this run made, and built on, is no longer in the database: the server crashed and came
 * back without it (commits wait for the disk only where it matters). The run stops before anything
 * moves past the records that commit held; the next run resumes from what the database kept.
 * Retryable, like a lost connection.
 */
export class CommitLostError extends DatabaseError {
  readonly stream: string;

  constructor(stream: string, detail: string, operation: string) {
    super({
      kind: 'connection',
      words: `a commit of this run on stream ${stream} is no longer in the database (${detail}): the server restarted and lost it`,
      operation,
    });
    this.stream = stream;
  }
}
