/** The read API's answers as the service shapes them: compact JSON, errors as `{"error": "err_…"}`. */
import type { Reply } from '../../http/server.js';

const JSON_TYPE = 'application/json; charset=utf-8';

/** A JSON answer of the read API. */
export function apiJson(status: number, value: unknown, headers?: Record<string, string>): Reply {
  return { status, contentType: JSON_TYPE, body: JSON.stringify(value), ...(headers ? { headers } : {}) };
}

/** An answer whose JSON is already written (records rendered from rows), as text or bytes. */
export function apiText(body: string | Buffer, headers: Record<string, string>): Reply {
  return { status: 200, contentType: JSON_TYPE, body, headers };
}

/** The service's error shape with an `err_…` code. */
export function apiError(status: number, error: string, headers?: Record<string, string>): Reply {
  return apiJson(status, { error }, headers);
}

/**
 * The mirror cannot answer truthfully (the list, or the global list a look-up needs, is not
 * backfilled yet): 503, never an empty answer that looks complete.
 */
export const NOT_BACKFILLED = 'err_mirror_not_backfilled';
/** The stored `/info` holds no token (no reference refresh yet), or no fees for them. */
export const NO_REFERENCE = 'err_reference_not_mirrored';
export const NO_FEES = 'err_fees_not_mirrored';
/** The database failed or timed out. */
export const UNAVAILABLE = 'err_mirror_unavailable';
