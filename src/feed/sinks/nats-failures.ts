/**
 * Why NATS did not take a batch, as a {@link SinkDeliveryError}: retryable when trying again
 * later may succeed by itself (no answer in time, a connection lost or refused, JetStream not
 * answering, a server-side failure), not retryable when someone has to change something first
 * (credentials, permissions, the stream's configuration or limits). Classified by the client's
 * error classes and JetStream's status codes, never by message text.
 */
import { JetStreamApiError } from '@nats-io/jetstream';
import {
  AuthorizationError,
  ClosedConnectionError,
  ConnectionError,
  DrainingConnectionError,
  InvalidArgumentError,
  PermissionViolationError,
  RequestError,
  TimeoutError,
  UserAuthenticationExpiredError,
} from '@nats-io/transport-node';
import { SinkDeliveryError } from './sink-target.js';

/** `error` (thrown while `doing`, e.g. `publishing position 42`) as a {@link SinkDeliveryError}. */
export function natsFailure(error: unknown, doing: string, timeoutMs: number): SinkDeliveryError {
  if (error instanceof SinkDeliveryError) return error;
  const fail = (problem: string, retryable: boolean) =>
    new SinkDeliveryError(`NATS: ${doing}: ${problem}`, { retryable, cause: error });
  if (error instanceof TimeoutError) return fail(`no answer within ${timeoutMs} ms`, true);
  if (
    error instanceof AuthorizationError ||
    error instanceof UserAuthenticationExpiredError ||
    error instanceof PermissionViolationError
  ) {
    return fail(`refused: ${error.message} (check LEDGER_NATS_URL's user or LEDGER_NATS_TOKEN)`, false);
  }
  if (error instanceof InvalidArgumentError) {
    // What the client was asked for does not fit the server, e.g. tls:// to one without TLS.
    return fail(`${error.message} (check LEDGER_NATS_URL)`, false);
  }
  if (isNoResponders(error)) {
    return fail('no responders: JetStream does not answer, or no stream captures the subject', true);
  }
  if (error instanceof JetStreamApiError) {
    // JetStream answers like HTTP: 5xx (503 while a stream has no leader) passes, 4xx stays.
    return fail(
      `${error.message} (JetStream error ${error.code}, status ${error.status})`,
      error.status >= 500,
    );
  }
  if (
    error instanceof ConnectionError ||
    error instanceof ClosedConnectionError ||
    error instanceof DrainingConnectionError ||
    error instanceof RequestError
  ) {
    return fail(connectionProblem(error), true);
  }
  // Something this list does not know: the runner's attempts bound how often it is tried again.
  return fail(error instanceof Error ? error.message : String(error), true);
}

/**
 * Whether nothing answered the request: the client raises a `RequestError` saying so, wrapped by
 * the JetStream client (as "jetstream is not enabled") when it was a publish or an API request.
 */
function isNoResponders(error: unknown): boolean {
  const request = error instanceof RequestError ? error : error instanceof Error ? error.cause : undefined;
  return request instanceof RequestError && request.isNoResponders();
}

/** A connection failure's message, with the system error code when the socket gave one. */
function connectionProblem(error: Error): string {
  const code = (error.cause as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && !error.message.includes(code)
    ? `${error.message} (${code})`
    : error.message;
}
