/**
 * The webhook sink's target: each batch POSTed as JSON (`{ sink, first, last, events }`), signed
 * with HMAC-SHA256 (`webhook-signature.ts`), within a deadline. A 2xx acknowledges the batch; a
 * 408, 429, 5xx, timeout or network failure may be tried again (after `Retry-After` when the far
 * side sent one); any other answer (a 4xx, a redirect) will not change by trying again.
 */

import { Agent, request } from 'undici';
import { deadline } from '../../abort.js';
import { redactUrl } from '../../config.js';
import { SINK_DEFAULTS } from '../../sink-settings.js';
import type { FeedEvent } from '../feed-event.js';
import { batchBody } from './sink-batches.js';
import { SinkDeliveryError, type SinkTarget } from './sink-target.js';
import { signWebhook, WEBHOOK_HEADERS } from './webhook-signature.js';

/** How much of an error answer's body goes into the error (and the sink's last error). */
const ERROR_BODY_LIMIT = 300;

/** Options of {@link createWebhookTarget}. */
export interface WebhookTargetOptions {
  /** The sink's name, sent in every body. */
  sink: string;
  url: string;
  /** Signs each body; never logged, never sent. */
  secret: string;
  /** How long one POST may take, answer included (`LEDGER_WEBHOOK_TIMEOUT_MS`). Default 10000. */
  timeoutMs?: number | undefined;
  /** Default `Date.now`. */
  nowMs?: () => number;
}

/** A webhook as a sink's target. */
export function createWebhookTarget(options: WebhookTargetOptions): SinkTarget {
  const { secret, sink } = options;
  const shown = redactUrl(options.url);
  const { url, authorization } = withoutCredentials(options.url);
  const timeoutMs = options.timeoutMs ?? SINK_DEFAULTS.webhookTimeoutMs;
  const nowMs = options.nowMs ?? Date.now;
  const agent = new Agent({ keepAliveTimeout: 10_000, connect: { timeout: timeoutMs } });
  const closing = new AbortController();
  return {
    kind: 'webhook',
    async deliver(events: readonly FeedEvent[]): Promise<void> {
      const body = batchBody(sink, events);
      const timestamp = Math.floor(nowMs() / 1000);
      const headers = {
        'content-type': 'application/json',
        'user-agent': 'ledger-indexer-webhook',
        [WEBHOOK_HEADERS.timestamp]: String(timestamp),
        [WEBHOOK_HEADERS.signature]: signWebhook({ secret, timestamp, body }),
        [WEBHOOK_HEADERS.delivery]: `${sink}:${events[0]?.position}-${events.at(-1)?.position}`,
        ...(authorization === undefined ? {} : { authorization }),
      };
      let answer: Awaited<ReturnType<typeof request>>;
      const bounded = deadline(timeoutMs, closing.signal);
      try {
        answer = await request(url, {
          method: 'POST',
          headers,
          body,
          dispatcher: agent,
          signal: bounded.signal,
        });
      } catch (error) {
        throw new SinkDeliveryError(`POST ${shown} failed: ${failureOf(error, timeoutMs)}`, {
          retryable: true,
          cause: error,
        });
      } finally {
        bounded.clear();
      }
      const { statusCode } = answer;
      if (statusCode >= 200 && statusCode < 300) {
        await answer.body.dump().catch(() => undefined);
        return;
      }
      const text = await beginningOf(answer.body);
      throw new SinkDeliveryError(`POST ${shown} answered HTTP ${statusCode}${text ? `: ${text}` : ''}`, {
        retryable: statusCode === 408 || statusCode === 429 || statusCode >= 500,
        retryAfterMs: parseRetryAfter(answer.headers['retry-after'], nowMs()),
      });
    },
    async close() {
      closing.abort();
      await agent.destroy();
    },
  };
}

/**
 * The URL without its `user:password@`, and those as a Basic `authorization` header: undici
 * would drop them silently.
 */
function withoutCredentials(value: string): { url: string; authorization?: string } {
  const parsed = new URL(value);
  if (parsed.username === '' && parsed.password === '') return { url: value };
  const credentials = `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`;
  parsed.username = '';
  parsed.password = '';
  return { url: parsed.toString(), authorization: `Basic ${Buffer.from(credentials).toString('base64')}` };
}

/** Why a request failed, in a few words (no header, so never the signature). */
function failureOf(error: unknown, timeoutMs: number): string {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return error.name === 'TimeoutError' ? `no answer within ${timeoutMs} ms` : 'stopped';
  }
  const code = (error as { code?: unknown } | undefined)?.code;
  const message = error instanceof Error ? error.message : String(error);
  return typeof code === 'string' ? `${code} (${message})` : message;
}

/** The first few hundred characters of an answer's body, on one line. */
async function beginningOf(body: AsyncIterable<Buffer> & { destroy(): unknown }): Promise<string> {
  let text = '';
  try {
    for await (const chunk of body) {
      text += chunk.toString('utf8');
      if (text.length >= ERROR_BODY_LIMIT) break;
    }
  } catch {
    // The answer's status says enough.
  } finally {
    body.destroy();
  }
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > ERROR_BODY_LIMIT ? `${line.slice(0, ERROR_BODY_LIMIT)}…` : line;
}

/** `Retry-After` in ms: delay-seconds or an HTTP date; `undefined` when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, nowMs: number): number | undefined {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return undefined;
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  const at = /[A-Za-z]{3}/.test(text) ? Date.parse(text) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, at - nowMs);
}
