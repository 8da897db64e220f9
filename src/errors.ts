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

/** The request never got an answer: connection refused or reset, DNS, or a timeout. */
export class NetworkError extends LedgerIndexerError {
  readonly url: string;

  constructor(url: string, message: string, cause?: unknown) {
    super(`${message} (${url})`, { cause, retryable: true });
    this.url = url;
  }
}

/** The request took longer than the configured timeout. */
export class TimeoutError extends NetworkError {}

/**
 * A 2xx answer whose body is not what the endpoint promises (not JSON, truncated, page fields
 * missing). Retried a few times, since truncation is usually transient, then raised.
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
