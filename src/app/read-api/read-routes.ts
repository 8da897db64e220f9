/**
 * The mirror's read API: the service's query endpoints, in both spellings of the look-ups and
 * both list dialects, answered from PostgreSQL. A drop-in for the service's client library: its
 * base URL and its list URL are the surface's address.
 */
import type { Database } from '../../db/connect.js';
import { toDatabaseError } from '../../db/database-errors.js';
import type { Executor } from '../../db/rows.js';
import { DatabaseError } from '../../errors.js';
import type { ApiRequest, Reply } from '../../http/server.js';
import type { Logger } from '../../logger.js';
import type { ReadObserver } from '../../metrics/index.js';
import { listDialect } from '../../service-query/key-query.js';
import { isAuthorized } from './access.js';
import { type CoverageReader, sharedCoverageReads } from './coverage-reads.js';
import { batchedLookUps, type LookUpReader } from './look-up-batches.js';
import { apiError, UNAVAILABLE } from './read-reply.js';
import { readAlone, readOnly } from './read-transaction.js';
import { listAnswer, oneRecordAnswer } from './record-answers.js';
import { balancesAnswer, feesAnswer, infoAnswer } from './reference-answers.js';

/** What the read API reads and who may: the database (a bounded pool), the token, the clock. */
export interface ReadApiSources {
  database: Database;
  logger: Logger;
  /** The bearer token asked of every request; undefined = none asked. */
  token: string | undefined;
  /** Told of every answer (the read API's metrics). */
  observer?: ReadObserver | undefined;
  now?: () => Date;
}

/** An answer to compute in a read-only transaction. */
type Answer = (db: Executor, now: Date) => Promise<Reply>;

/** A path the read API serves: its template (for the metrics) and its answer. */
interface ReadRoute {
  route: string;
  answer: Answer;
  /** Its statements need no common snapshot (a look-up, a list by key): sent alone (`readAlone`). */
  alone?: true;
}

function decode(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** Reads shared by the answers sent alone (look-ups, lists by key) on a pool of read-only sessions. */
export interface SharedReads {
  coverage: CoverageReader;
  lookUp: LookUpReader;
}

/**
 * The route of a path, as the service's routes match it; undefined for a path it does not serve.
 * `shared`: the reads of the answers sent alone; default: each answer its own reads.
 */
export function matchReadPath(
  path: string,
  params: URLSearchParams,
  shared?: SharedReads,
): ReadRoute | undefined {
  const { coverage, lookUp } = shared ?? {};
  const parts = path.split('/').slice(1).map(decode);
  if (parts.some((p) => p === undefined || p === '')) return undefined;
  const [head, a, b] = parts as string[];
  const route = (template: string, answer: Answer): ReadRoute => ({ route: template, answer });
  const alone = (template: string, answer: Answer): ReadRoute => ({ route: template, answer, alone: true });
  // A list by page number reads its length and its page in one snapshot; by key, alone.
  const list = (template: string, account: string | undefined): ReadRoute =>
    (listDialect('both', params) === 'key' ? alone : route)(template, (db, now) =>
      listAnswer(db, { params, account, now, coverage }),
    );
  switch (parts.length) {
    case 1:
      if (head === 'info') return route('/info', (db) => infoAnswer(db));
      if (head === 'fees') return route('/fees', (db) => feesAnswer(db, undefined));
      if (head === 'txs') return list('/txs', undefined);
      return undefined;
    case 2:
      if (head === 'balances')
        return route('/balances/{account}', (db, now) =>
          balancesAnswer(db, { account: a!, tag: undefined, now }),
        );
      if (head === 'fee') return route('/fee/{tag}', (db) => feesAnswer(db, a!));
      if (head === 'txs' || head === 'txsByAccount') return list(`/${head}/{account}`, a!);
      if (head === 'tx' || head === 'txsByHash')
        return alone(`/${head}/{hash}`, (db, now) =>
          oneRecordAnswer(db, { by: 'ledgerHash', hash: a!, now, coverage, lookUp }),
        );
      if (head === 'minted' || head === 'mintedTxByChainTxHash')
        return alone(`/${head}/{hash}`, (db, now) =>
          oneRecordAnswer(db, { by: 'mintChainHash', hash: a!, now, coverage, lookUp }),
        );
      return undefined;
    case 3:
      if (head === 'balance')
        return route('/balance/{tag}/{account}', (db, now) =>
          balancesAnswer(db, { account: b!, tag: a!, now }),
        );
      return undefined;
    default:
      return undefined;
  }
}

/**
 * The read API as the HTTP surface calls it: undefined for a path it does not serve (the surface
 * answers 404), 401 without the token, 503 when the database fails.
 */
export function createReadApi(sources: ReadApiSources): (request: ApiRequest) => Promise<Reply> | undefined {
  const now = sources.now ?? (() => new Date());
  // Shared only where those answers' statements are sent alone (`readAlone`): elsewhere each reads
  // in its own transaction.
  const { database } = sources;
  const shared = database.readOnlySessions
    ? { coverage: sharedCoverageReads(), lookUp: batchedLookUps(database.db) }
    : undefined;
  return (request) => {
    const matched = matchReadPath(request.path, request.params, shared);
    if (matched === undefined) return undefined;
    const started = performance.now();
    return answerRoute(sources, request, matched, now).then((reply) => {
      sources.observer?.answered(matched.route, reply.status, (performance.now() - started) / 1000);
      return reply;
    });
  };
}

async function answerRoute(
  sources: ReadApiSources,
  request: ApiRequest,
  { answer, alone }: ReadRoute,
  now: () => Date,
): Promise<Reply> {
  if (request.method !== 'GET' && request.method !== 'HEAD') {
    return apiError(405, 'err_method_not_allowed', { allow: 'GET, HEAD' });
  }
  if (!isAuthorized(sources.token, request.authorization)) {
    return apiError(401, 'err_unauthorized', { 'www-authenticate': 'Bearer' });
  }
  try {
    return await (alone ? readAlone : readOnly)(sources.database, (db) => answer(db, now()));
  } catch (error) {
    // The database failing (a timeout included) is 503; anything else is a bug: the surface's 500.
    const failure = toDatabaseError(error, { operation: 'read-api' });
    if (!(failure instanceof DatabaseError)) throw error;
    sources.logger.warn({ err: failure, path: request.path }, 'read api: the database failed');
    return apiError(503, UNAVAILABLE);
  }
}
