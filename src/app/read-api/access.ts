/**
 * Who may read the mirror through the HTTP surface: anyone on a loopback address, and with a
 * bearer token set (`LEDGER_HTTP_TOKEN`) only the holders of it. A non-loopback address without a
 * token is refused at start: the surface serves the ledger's records.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import { ENV } from '../../config.js';
import { ConfigError } from '../../errors.js';

/** Whether `host` is a loopback address (`127.0.0.0/8`, `::1`, `localhost`). */
export function isLoopback(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  return bare === 'localhost' || bare === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}

/** Throws the one-line {@link ConfigError} (exit 2) when `host` is not loopback and no token is set. */
export function checkBindable(host: string, token: string | undefined): void {
  if (token !== undefined || isLoopback(host)) return;
  throw new ConfigError(
    ENV.httpToken,
    `is required to serve the mirror on ${host} (${ENV.httpHost}), which is not a loopback address`,
  );
}

/** Whether the request's `Authorization` header carries the token (always, when none is set). */
export function isAuthorized(token: string | undefined, authorization: string | undefined): boolean {
  if (token === undefined) return true;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '');
  if (match === null) return false;
  // Compared as digests, in constant time: the answer tells nothing of how much matched.
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(match[1]!), digest(token));
}
