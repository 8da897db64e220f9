import { HttpError } from '../errors.js';
import { attempt, openTransportState } from './http-attempt.js';
import { retry } from './http-retry.js';
import type { HttpRequest, HttpTransport, HttpTransportOptions } from './http-types.js';
import { sharedStop } from './stop-token.js';

/** Whether an error is the service's "not found" (HTTP 404). */
export function isNotFound(error: unknown): error is HttpError {
  return error instanceof HttpError && error.status === 404;
}

/** Creates the transport over one keep-alive connection pool to the base URL's origin. */
export function createHttpTransport(options: HttpTransportOptions): HttpTransport {
  const state = openTransportState(options);
  const { pool, counters } = state;
  return {
    send<T>(given: HttpRequest<T>): Promise<T> {
      const request = given.signal === undefined ? given : { ...given, signal: sharedStop(given.signal) };
      const url = state.shownBase + request.path;
      // The first attempt runs bare: a page that comes back fine, the hot path, pays nothing
      // for the retry machinery.
      return attempt(state, request, url).catch((error: unknown) => retry(state, request, url, error));
    },
    stats() {
      return { ...counters, byStatus: { ...counters.byStatus } };
    },
    async close() {
      if (!pool.closed) await pool.close();
    },
  };
}
