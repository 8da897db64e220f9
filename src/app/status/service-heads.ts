/**
 * The service's head of each stream (the newest rawId on its page 1), asked of the service and
 * kept in `sync_streams`, so every process reports the same lag: `status` and `/status` ask once
 * per call, `/metrics` through a probe that asks only when no process or walk saw it recently.
 */
import { deadline } from '../../abort.js';
import type { ClientObserver } from '../../client/observer.js';
import type { RequestBudget } from '../../client/request-budget.js';
import type { Config } from '../../config.js';
import type { Database } from '../../db/connect.js';
import { listStreams, type StreamStatus } from '../../db/queries/stream-queries.js';
import { type HeadSighting, recordStreamHeads } from '../../db/write/stream-heads.js';
import { HEAD_PROBE_MAX_AGE_MS, HEAD_PROBE_TIMEOUT_MS } from '../../defaults.js';
import type { Logger } from '../../logger.js';

/**
 * What the head reads share with the process's own client: a worker's request budget (kept in
 * Redis for every worker, so a scrape or a status page takes from it like a job) and the request
 * metrics.
 */
export interface HeadReadClient {
  budget?: RequestBudget | undefined;
  observer?: ClientObserver | undefined;
}

/** A stream's head at the service, or why it could not be read. */
export type ServiceHead = { rawId: number | null; error: string | null };

/** Page 1 of each stream, fetched once (one retry): its newest rawId is the service's head for that stream. */
export async function readServiceHeads(
  config: Config,
  streams: ReadonlyArray<Pick<StreamStatus, 'key' | 'spec'>>,
  signal: AbortSignal,
  shared: HeadReadClient = {},
): Promise<Map<string, ServiceHead>> {
  const { createLedgerClient } = await import('../../client/ledger-client.js');
  const { clientOptionsFromConfig } = await import('../../client/options.js');
  const { createFetchPage } = await import('../sync-adapters.js');
  const client = createLedgerClient({
    ...clientOptionsFromConfig(config),
    retries: 1,
    budget: shared.budget,
    observer: shared.observer,
  });
  const fetchPage = createFetchPage(client, signal);
  const heads = new Map<string, ServiceHead>();
  try {
    await Promise.all(
      streams.map(async (stream) => {
        try {
          const page = await fetchPage(stream.spec, 1);
          const ids = page.txs.map((tx) => tx.rawId);
          heads.set(stream.key, { rawId: ids.length > 0 ? Math.max(...ids) : null, error: null });
        } catch (error) {
          heads.set(stream.key, {
            rawId: null,
            error: error instanceof Error ? error.message : String(error),
          });
        }
      }),
    );
  } finally {
    await client.close();
  }
  return heads;
}

/**
 * Keeps the heads read at `seenAt` with their streams. Best effort: a database that refuses the
 * write (a read-only replica behind `serve`) costs a log line, not the answer.
 */
export async function storeServiceHeads(input: {
  database: Database;
  heads: ReadonlyMap<string, ServiceHead>;
  seenAt: Date;
  logger: Logger;
}): Promise<void> {
  const sightings: HeadSighting[] = [];
  for (const [key, head] of input.heads) {
    if (head.rawId !== null) sightings.push({ key, rawId: head.rawId, seenAt: input.seenAt });
  }
  if (sightings.length === 0) return;
  try {
    await recordStreamHeads(input.database.db, sightings);
  } catch (error) {
    input.logger.warn({ err: firstLine(error) }, 'could not store the service heads seen');
  }
}

/** Refreshes the stored heads before a scrape reads them. */
export interface HeadProbe {
  /** Asks the service for the heads not seen within the probe's age; never throws. */
  refresh(signal: AbortSignal): Promise<void>;
}

/**
 * The `/metrics` probe: with `LEDGER_BASE_URL` set, reads page 1 of each stream whose stored head
 * is older than `maxAgeMs` (default {@link HEAD_PROBE_MAX_AGE_MS}), at most once per `maxAgeMs`
 * per process, within `timeoutMs`, and stores what it saw. Scrapes of several workers and
 * `serve` within that age share one sighting through the database.
 */
export function createHeadProbe(input: {
  config: Config;
  database: Database;
  logger: Logger;
  maxAgeMs?: number | undefined;
  timeoutMs?: number | undefined;
  now?: (() => Date) | undefined;
  shared?: HeadReadClient | undefined;
}): HeadProbe {
  const { config, database, logger } = input;
  const maxAgeMs = input.maxAgeMs ?? HEAD_PROBE_MAX_AGE_MS;
  const timeoutMs = input.timeoutMs ?? HEAD_PROBE_TIMEOUT_MS;
  const now = input.now ?? (() => new Date());
  let lastAttempt = Number.NEGATIVE_INFINITY;
  let inFlight: Promise<void> | null = null;

  const probe = async (signal: AbortSignal): Promise<void> => {
    const at = now();
    lastAttempt = at.getTime();
    const stale = (await listStreams(database.db)).filter(
      (s) => s.headSeenAt === null || at.getTime() - s.headSeenAt.getTime() >= maxAgeMs,
    );
    if (stale.length === 0) return;
    const bounded = deadline(timeoutMs, signal);
    const heads = await readServiceHeads(config, stale, bounded.signal, input.shared).finally(bounded.clear);
    for (const [key, head] of heads) {
      if (head.error !== null) logger.debug({ stream: key, err: head.error }, 'head probe failed');
    }
    await storeServiceHeads({ database, heads, seenAt: at, logger });
  };

  return {
    async refresh(signal) {
      if (config.ledgerBaseUrl === undefined) return;
      if (inFlight !== null) return inFlight;
      if (now().getTime() - lastAttempt < maxAgeMs) return;
      inFlight = probe(signal)
        .catch((error: unknown) => logger.warn({ err: firstLine(error) }, 'head probe failed'))
        .finally(() => {
          inFlight = null;
        });
      return inFlight;
    },
  };
}

function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? '';
}
