import { selectUnstoredRawIds } from '../../db/queries/backfill-proofs.js';
import { selectResolvedVersions } from '../../db/queries/conflicts.js';
import { selectImmutableColumns, selectUnlistedInSpan } from '../../db/queries/key-spans.js';
import { countListStored, type ListStream } from '../../db/queries/list-counts.js';
import { type ImmutableColumn, immutableDifferences } from '../../db/schema/immutable-columns.js';
import { encodeTransaction } from '../../db/write/encode.js';
import type { LedgerTx } from '../../domain/model.js';
import { InvalidRecordError } from '../../errors.js';
import { readKeyAfter } from '../../sync/key-source.js';
import { keyWalkScreen } from '../../sync/raw-id-screen.js';
import { countListByKey, type KeyCount, type KeySpan, type SpanComparison } from '../../verify/key-count.js';
import type { AppContext } from '../context.js';
import { createFetchKeyHead, createFetchKeyPage } from '../sync-adapters.js';
import { createKeyWindow } from './key-window.js';

/** RawIds named per kind (missing, not listed, differing); the totals are always counted. */
const NAMED = 20;

/**
 * A stream's list read by key from the bottom (the client's count a request, following a silent
 * cap from the last rawId; far from the head, in ranges at once as a walk reads them,
 * `key-window.ts`) and compared, answer by answer in order, with the table's
 * records of the same rawId span up to `upTo` (the watermark; -1 compares nothing).
 */
export async function countStreamByKey(input: {
  app: Pick<AppContext, 'client' | 'database' | 'logger'>;
  list: ListStream;
  upTo: number;
  signal?: AbortSignal | undefined;
}): Promise<KeyCount> {
  const { list, app } = input;
  const fetchKeyPage = createFetchKeyPage(app.client, input.signal);
  const fetchKeyHead = createFetchKeyHead(app.client, input.signal);
  // Counted as a walk reads the list: a record the service does not vouch for is no record of it.
  const screen = keyWalkScreen({ fetchKeyPage, spec: list, logger: app.logger });
  const reading = { fetchKeyPage, screen, spec: list, count: app.client.keyCount(), signal: input.signal };
  const window = createKeyWindow({
    from: 0,
    read: async (after, upTo) => ({ served: await readKeyAfter(reading, after ?? 0, upTo), readAt: 0 }),
    settle: { windowMs: 0, headAt: undefined },
    lanes: () => app.client.inFlight(),
    readHead: () => fetchKeyHead(list),
  });
  let ended = false;
  try {
    return await countListByKey(
      {
        async next() {
          if (ended) return null;
          const { step, ends } = await window.next();
          ended = ends;
          return { proven: step.proven, served: step.read.served, rejected: step.rejected };
        },
        compareSpan: (span) => compareSpan(app, list, span),
      },
      { upTo: input.upTo, nameAtMost: NAMED, signal: input.signal },
    );
  } finally {
    window.close();
  }
}

/** One span: the table's records of the list in it against those the service listed there. */
async function compareSpan(
  app: Pick<AppContext, 'database'>,
  stream: ListStream,
  span: KeySpan,
): Promise<SpanComparison> {
  const db = app.database.db;
  const listed = [...new Set([...span.records.map((tx) => tx.rawId), ...span.rejectedRawIds])];
  const range = { above: span.above, atOrBelow: span.atOrBelow };
  return {
    stored: await countListStored(db, { stream, ...range }),
    missing: await selectUnstoredRawIds(db, listed),
    extra: await selectUnlistedInSpan(db, { stream, ...range, listed, nameAtMost: NAMED }),
    differing: await differingRecords(app, span.records),
  };
}

/** Listed records whose immutable fields differ from the stored row's, ascending by rawId. */
async function differingRecords(
  app: Pick<AppContext, 'database'>,
  records: readonly LedgerTx[],
): Promise<{ rawId: number; fields: string[] }[]> {
  const stored = await selectImmutableColumns(
    app.database.db,
    records.map((tx) => tx.rawId),
  );
  const differing = new Map<number, { fields: string[]; served: Record<ImmutableColumn, string> }>();
  for (const tx of records) {
    const row = stored.get(tx.rawId);
    if (row === undefined) continue;
    let served: ReturnType<typeof encodeTransaction>['row'];
    try {
      served = encodeTransaction(tx).row;
    } catch (error) {
      // A record that cannot be stored exactly is set aside by a sync, never compared.
      if (error instanceof InvalidRecordError) continue;
      throw error;
    }
    const fields = immutableDifferences(row, served);
    if (fields.length > 0) differing.set(tx.rawId, { fields, served });
  }
  // A version an operator resolved (the stored one stands) differs no more; asked only for
  // the records that differ, which are almost never any.
  const resolved = await selectResolvedVersions(app.database.db, [...differing.keys()]);
  for (const [rawId, { served }] of differing)
    if (resolved.get(rawId)?.some((version) => immutableDifferences(version, served).length === 0))
      differing.delete(rawId);
  return [...differing].sort((a, b) => a[0] - b[0]).map(([rawId, { fields }]) => ({ rawId, fields }));
}
