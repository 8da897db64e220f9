import { ReplyError } from 'ioredis';
import { redactUrl } from '../config.js';
import { RedisAuthError, RedisUnavailableError } from '../errors.js';

/**
 * The kind of a Redis error reply (`WRONGPASS`, `NOAUTH`, `ERR`…), `undefined` for anything that
 * is not a reply. RESP puts the kind as the reply's first upper-case word; ioredis keeps it only
 * there, so this reads the protocol field, not free text.
 */
export function redisReplyCode(error: unknown): string | undefined {
  if (!(error instanceof ReplyError)) return undefined;
  return /^[A-Z][A-Z_]*/.exec((error as Error).message)?.[0];
}

/**
 * Whether `error` says Redis will not take this client's credentials: `refused` (wrong user or
 * password), `missing` (the server needs some and none were given), else `null`. Neither is
 * transient: reconnecting cannot help.
 */
export function credentialProblem(error: unknown): 'refused' | 'missing' | null {
  const code = redisReplyCode(error);
  if (code === 'WRONGPASS') return 'refused';
  if (code === 'NOAUTH') return 'missing';
  return null;
}

/**
 * A one-line, secret-free description of a Redis failure, for logs and messages. Only the
 * message's first line is kept (never the command and its arguments, which for HELLO/AUTH hold
 * the password), and the password of `url` is masked wherever it still appears.
 */
export function describeRedisFailure(error: unknown, url: string): string {
  const message = error instanceof Error ? error.message : String(error);
  const line = message.split('\n')[0]?.trim() || (error instanceof Error ? error.name : 'unknown error');
  return maskSecrets(line, url);
}

function maskSecrets(text: string, url: string): string {
  let masked = text.replace(/(\/\/[^/@\s:]*:)[^@\s/]*@/g, '$1***@');
  for (const secret of urlSecrets(url)) masked = masked.split(secret).join('***');
  return masked;
}

function urlSecrets(url: string): string[] {
  try {
    const { password } = new URL(url);
    if (!password) return [];
    return [...new Set([password, safeDecode(password)])];
  } catch {
    return [];
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/**
 * The one line a command ends with when Redis failed it: the typed errors' own message, else
 * the client's described without secrets.
 */
export function redisFailureLine(error: unknown, url: string): string {
  if (error instanceof RedisAuthError || error instanceof RedisUnavailableError) return error.message;
  return `Redis at REDIS_URL (${redactUrl(url)}) failed: ${describeRedisFailure(error, url)}`;
}

/** Decides which failures are worth a log line: each distinct one once, then at most every interval. */
export interface FailureLimiter {
  /** Whether the failure described by `key` is logged now, and how many like it were held back since. */
  admit(key: string): { log: boolean; suppressed: number };
  /** Forgets every failure: after a recovery, the next failure is logged at once. */
  reset(): void;
}

/** Creates a {@link FailureLimiter}; `now` is a parameter so tests need no clock. */
export function createFailureLimiter(options: { intervalMs: number; now?: () => number }): FailureLimiter {
  const now = options.now ?? Date.now;
  const seen = new Map<string, { loggedAt: number; suppressed: number }>();
  return {
    admit(key) {
      const at = now();
      const entry = seen.get(key);
      if (entry && at - entry.loggedAt < options.intervalMs) {
        entry.suppressed += 1;
        return { log: false, suppressed: entry.suppressed };
      }
      // A handful of distinct failures at most in practice; the cap only guards against a flood.
      if (!entry && seen.size >= 100) seen.clear();
      seen.set(key, { loggedAt: at, suppressed: 0 });
      return { log: true, suppressed: entry?.suppressed ?? 0 };
    },
    reset() {
      seen.clear();
    },
  };
}
