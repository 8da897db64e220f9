/** The read API's record answers: the lists in both dialects and the single-record look-ups. */
import { selectKeyPage, selectPage } from '../../db/queries/read-api/list-records.js';
import { recordJson } from '../../db/queries/read-api/record-rows.js';
import { selectStoredTokens } from '../../db/queries/read-api/reference-data.js';
import { selectStreamCoverage } from '../../db/queries/read-api/stream-coverage.js';
import type { Executor } from '../../db/rows.js';
import type { Reply } from '../../http/server.js';
import { listBody, READ_MAX_BODY_BYTES } from './body-cap.js';
import {
  answeringStream,
  type CoverageNeed,
  completeUpTo,
  coveringKeys,
  freshnessHeaders,
} from './coverage.js';
import type { CoverageReader } from './coverage-reads.js';
import { readListRequest } from './list-request.js';
import { type LookUpReader, lookUpsAlone } from './look-up-batches.js';
import { apiError, apiText, NO_REFERENCE, NOT_BACKFILLED } from './read-reply.js';

/** How a backfilled stream answers: up to which rawId, and the freshness headers. */
export interface Coverage {
  upTo: number;
  headers: Record<string, string>;
}

/**
 * How the stream that answers `need` does, or null when none is backfilled; read by `read` (by
 * default now, in the caller's snapshot).
 */
export async function coverageOf(
  db: Executor,
  need: CoverageNeed,
  now: Date,
  read: CoverageReader = selectStreamCoverage,
): Promise<Coverage | null> {
  const keys = coveringKeys(need);
  const stream = answeringStream(keys, await read(db, keys));
  const upTo = stream === undefined ? null : completeUpTo(stream);
  return stream === undefined || upTo === null ? null : { upTo, headers: freshnessHeaders(stream, now) };
}

/**
 * `/txs`, `/txs/{account}`, `/txsByAccount/{account}` in the dialect the parameters pick. A list
 * by key reads its coverage with `coverage` (its statements need no common snapshot); a list by
 * page number reads it with its length and its page, in one snapshot.
 */
export async function listAnswer(
  db: Executor,
  input: {
    params: URLSearchParams;
    account: string | undefined;
    now: Date;
    coverage?: CoverageReader | undefined;
  },
): Promise<Reply> {
  const { params } = input;
  const tokenTag = params.get('tokenTag');
  const knownTags = tokenTag ? (await selectStoredTokens(db)).map((t) => t.tag) : [];
  const request = readListRequest({ params, account: input.account, knownTags });
  if ('error' in request) return apiError(400, request.error);
  // A key request's tags are read against `/info`'s: without them every tag would match nothing.
  if (request.dialect === 'key' && tokenTag && knownTags.length === 0) return apiError(503, NO_REFERENCE);
  const coverage = await coverageOf(
    db,
    {
      account: request.filter.account,
      tokenTag: params.get('tokenTag') ?? undefined,
      action: request.filter.action,
      withoutAction: request.filter.withoutAction,
    },
    input.now,
    request.dialect === 'key' ? input.coverage : undefined,
  );
  if (coverage === null) return apiError(503, NOT_BACKFILLED);
  const { headers } = coverage;
  const filter = { ...request.filter, upTo: coverage.upTo };
  if (request.dialect === 'key') {
    const { rows, hasNextPage } = await selectKeyPage(db, filter, request.query);
    const tail = (cut: boolean) => `],"hasNextPage":${hasNextPage || cut}}`;
    return apiText(listBody('{"txs":[', rows.map(recordJson), tail, READ_MAX_BODY_BYTES), headers);
  }
  const { rows, totalPages } = await selectPage(db, filter, request.page);
  const head = request.accid === undefined ? '{' : `{"accid":${JSON.stringify(request.accid)},`;
  const start = `${head}"currentPage":${request.page},"totalPages":${totalPages},"txs":[`;
  return apiText(
    listBody(start, rows.map(recordJson), () => ']}'),
    headers,
  );
}

/**
 * `/tx/{hash}` (`/txsByHash/…`) and `/minted/{hash}` (`/mintedTxByChainTxHash/…`): `{tx}` or not
 * found; the coverage read with `coverage` (default: now), the record with `lookUp` (default:
 * alone, in `db`).
 */
export async function oneRecordAnswer(
  db: Executor,
  input: {
    by: 'ledgerHash' | 'mintChainHash';
    hash: string;
    now: Date;
    coverage?: CoverageReader | undefined;
    lookUp?: LookUpReader | undefined;
  },
): Promise<Reply> {
  const coverage = await coverageOf(db, { globalOnly: true }, input.now, input.coverage);
  const record = await (input.lookUp ?? lookUpsAlone(db))(input.by, input.hash);
  if (record !== undefined) return apiText(`{"tx":${recordJson(record)}}`, coverage?.headers ?? {});
  // Not stored: the service has no such record only if the mirror holds the whole list.
  return coverage === null ? apiError(503, NOT_BACKFILLED) : apiError(404, 'err_not_found', coverage.headers);
}
