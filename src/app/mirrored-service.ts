import type { LedgerClient } from '../client/ledger-client.js';

import type { Db } from '../db/drizzle-db.js';
import { lowestStoredRecord, markVerified, pinAnchor, readPinnedAnchor } from '../db/stores/pinned-anchor.js';
import { REFERENCE_REFRESH_MS } from '../defaults.js';
import { lowestAnchor, servesAnchor } from '../domain/service-anchor.js';
import { LedgerIndexerError, type ServiceAnchor, ServiceMismatchError } from '../errors.js';
import type { Logger } from '../logger.js';
import { createFetchByHash } from './sync-adapters.js';

/** How a sync may go on with this service: what {@link MirroredService.check} found. */
export type ServiceCheck =
  /** The mirror holds no record: it adopts the service it first syncs. */
  | { state: 'empty' }
  /** The service knows the mirror's anchor. */
  | { state: 'same'; anchor: ServiceAnchor }
  /** The service does not know it: the mirror holds another service's records. */
  | { state: 'other'; anchor: ServiceAnchor; mirroredUrl: string | undefined };

/** What refuses a service other than the one the mirror holds (see `mirrored_service`). */
export interface MirroredService {
  /**
   * Asks the service for the mirror's anchor (the pinned record, else the lowest stored one):
   * one look-up by hash, none while the mirror is empty. A verified anchor not pinned yet is
   * pinned. Service failures throw as usual.
   */
  check(options?: { signal?: AbortSignal | undefined }): Promise<ServiceCheck>;
  /**
   * {@link check}, throwing {@link ServiceMismatchError} when the mirror holds another service;
   * with `adopt`, pins a record of this service instead (one more request) and goes on.
   */
  ensure(options?: { adopt?: boolean | undefined; signal?: AbortSignal | undefined }): Promise<ServiceCheck>;
  /** After a sync into an empty mirror: pins the lowest record it stored, unless one is pinned. */
  pinFirstRecord(): Promise<void>;
}

/** How long an address that answered the anchor is trusted without asking again, ms: the token list's refresh period. */
export const VERIFIED_TRUST_MS = REFERENCE_REFRESH_MS;

/** How the error line tells the operator to switch services on purpose. */
export const ADOPT_SERVICE_HINT =
  'run "ledger-indexer sync --adopt-service" once to follow this service instead';

/** Creates the check over the database and the client; `serviceUrl` is the client's base URL, password hidden. */
export function createMirroredService(input: {
  db: Db;
  client: LedgerClient;
  serviceUrl: string;
  logger: Logger;
  now?: (() => Date) | undefined;
}): MirroredService {
  const { db, client, serviceUrl, logger } = input;
  const now = input.now ?? (() => new Date());
  const check: MirroredService['check'] = async (options = {}) => {
    const pinned = await readPinnedAnchor(db);
    const anchor = pinned ?? (await lowestStoredRecord(db));
    if (anchor === null) return { state: 'empty' };
    const known: ServiceAnchor = { rawId: anchor.rawId, ledgerHash: anchor.ledgerHash };
    // The same address answered the anchor a moment ago (a run from cron every few seconds):
    // trusted without asking again, as a worker trusts it for a while.
    const verified = pinned?.verified;
    if (verified?.url === serviceUrl && now().getTime() - verified.at.getTime() < VERIFIED_TRUST_MS)
      return { state: 'same', anchor: known };
    const served = await createFetchByHash(client, options.signal)(anchor.ledgerHash);
    if (!servesAnchor(known, served))
      return { state: 'other', anchor: known, mirroredUrl: pinned?.serviceUrl };
    if (pinned === null) await pinAnchor(db, { ...known, serviceUrl }, { replace: false });
    await markVerified(db, serviceUrl, now());
    return { state: 'same', anchor: known };
  };
  return {
    check,
    async ensure(options = {}) {
      const found = await check(options);
      if (found.state !== 'other') return found;
      if (!options.adopt) {
        throw new ServiceMismatchError({ ...found, serviceUrl, way: ADOPT_SERVICE_HINT });
      }
      const page = await client.txs({ page: 1 }, { signal: options.signal });
      const anchor = lowestAnchor(page.txs);
      if (anchor === undefined) {
        throw new LedgerIndexerError(`cannot adopt ${serviceUrl}: it lists no record to recognise it by`);
      }
      await pinAnchor(db, { ...anchor, serviceUrl }, { replace: true });
      logger.warn(
        { service: serviceUrl, previous_anchor_raw_id: found.anchor.rawId, anchor_raw_id: anchor.rawId },
        'mirror adopted another ledger service; the records it held stay',
      );
      return { state: 'same', anchor };
    },
    async pinFirstRecord() {
      if ((await readPinnedAnchor(db)) !== null) return;
      const lowest = await lowestStoredRecord(db);
      if (lowest === null) return;
      await pinAnchor(db, { ...lowest, serviceUrl }, { replace: false });
      // It came from this service a moment ago.
      await markVerified(db, serviceUrl, now());
    },
  };
}

/**
 * {@link MirroredService.ensure} for every job of a worker: a service found to be the mirror's is
 * trusted for `trustMs` (the configuration of a process does not change, and a look-up per job
 * would add a request to each); an empty mirror is asked again at each job (a query, no
 * request), and a refused service too. Concurrent jobs share one check.
 */
export function createServiceGuard(
  service: Pick<MirroredService, 'ensure'>,
  options: { trustMs: number; signal?: AbortSignal | undefined; now?: () => number },
): () => Promise<void> {
  const now = options.now ?? Date.now;
  let trustedUntil = Number.NEGATIVE_INFINITY;
  let running: Promise<void> | undefined;
  return () => {
    if (now() < trustedUntil) return Promise.resolve();
    running ??= service
      .ensure({ signal: options.signal })
      .then((found) => {
        if (found.state === 'same') trustedUntil = now() + options.trustMs;
      })
      .finally(() => {
        running = undefined;
      });
    return running;
  };
}
