/**
 * Which dialect a run reads the lists in: the configured one, or with `LEDGER_PAGING=auto` the
 * one the service answered with, asked once and kept in the database per list address, so later
 * runs ask nothing; a list answer of the wrong shape makes the run forget it (the next one asks).
 */

import type { ListDialect } from '../client/api-types.js';
import type { LedgerClient } from '../client/ledger-client.js';
import { redactUrl } from '../config.js';

import type { Db } from '../db/drizzle-db.js';
import { recordRunPaging } from '../db/stores/run-paging.js';
import {
  forgetServiceDialect,
  readServiceDialect,
  saveServiceDialect,
} from '../db/stores/service-dialects.js';
import { MalformedResponseError } from '../errors.js';

/** The dialect of the list reads, kept in the database across runs. */
export interface ListDialects {
  /** This run's dialect: the configured one, else the kept one, else the service's answer (kept). */
  resolve(signal?: AbortSignal): Promise<ListDialect>;
  /** After a list answer of the wrong shape, forgets the kept dialect: the next run asks again. */
  forgetOn(error: unknown): Promise<void>;
  /**
   * Records on the stream's latest run the dialect it read in and, by key, the count the service
   * accepted (the client's, lowered after a refusal): what `status` shows once the stream is idle.
   */
  recordRun(streamKey: string, dialect: ListDialect): Promise<void>;
}

/** Creates them over the client and the database (see the module's comment). */
export function createListDialects(input: {
  client: LedgerClient;
  db: Db;
  paging: 'auto' | 'key' | 'page';
  now?: () => Date;
}): ListDialects {
  const { client, db } = input;
  const listUrl = redactUrl(client.listUrl);
  // Known to this process once resolved (a worker asks for it at every job).
  let known: ListDialect | undefined;
  return {
    async resolve(signal) {
      if (input.paging !== 'auto') return client.listDialect({ signal });
      if (known !== undefined) return known;
      const kept = await readServiceDialect(db, listUrl);
      if (kept !== null) {
        client.rememberDialect(kept);
        known = kept;
        return kept;
      }
      const asked = await client.listDialect({ signal });
      await saveServiceDialect(db, { listUrl, paging: asked, at: (input.now ?? (() => new Date()))() });
      known = asked;
      return asked;
    },
    async forgetOn(error) {
      if (input.paging !== 'auto' || !(error instanceof MalformedResponseError)) return;
      known = undefined;
      await forgetServiceDialect(db, listUrl).catch(() => undefined);
    },
    async recordRun(streamKey, dialect) {
      await recordRunPaging(db, { streamKey, paging: dialect, keyCount: client.keyCount() });
    },
  };
}
