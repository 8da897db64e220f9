import type { AccountListForm, PagingMode } from '../config.js';
import type { KeyAnswerText } from '../domain/model.js';
import { HttpError } from '../errors.js';
import type { Logger } from '../logger.js';
import { createAccountLists } from './account-lists.js';
import { fillPath, type PathTemplates, queryString } from './api-paths.js';
import type { ListDialect, TxKeyAnswer, TxKeyPage, TxKeyQuery } from './api-types.js';
import type { CallOptions } from './call-options.js';
import { guessKeyAnswer } from './key-answer-guess.js';
import type { ClientGets } from './ledger-calls.js';
import { keyPageQuery } from './list-query.js';
import { parseListDialect, parseTxKeyPage } from './page.js';

/** The smallest count a refused key request is halved to; a refusal at this count is an ordinary error. */
export const MIN_KEY_COUNT = 10;

/** Key-paging lists: the global one and the accounts', with the count the service accepts. */
export interface KeyLister {
  txsByKey(query: TxKeyQuery, call?: CallOptions): Promise<TxKeyPage>;
  /**
   * {@link KeyLister.txsByKey} of a list other than an account's, kept as text for a reader that
   * parses it elsewhere, with a guess of what it holds (`guessKeyAnswer`). Nothing is checked
   * here: an answer cut short, read as text, is the reader's to ask again.
   */
  txsTextByKey(query: Omit<TxKeyQuery, 'account'>, call?: CallOptions): Promise<KeyAnswerText>;
  /** The count asked when a query names none: the configured one, or less once the service refused it. */
  keyCount(): number;
}

/** Settings of {@link createKeyLister}. */
export interface KeyListerOptions {
  /** GETs on the list host. */
  gets: ClientGets;
  paths: Pick<PathTemplates, 'txsByKey' | 'txsByKeyAccount'>;
  accountLists: AccountListForm;
  pageCount: number;
  logger: Logger;
}

/**
 * Creates the key-paging lists. A request the service refuses with 400 or 422 is asked again
 * with half the count (not below {@link MIN_KEY_COUNT}), and the count it accepts is kept for
 * every later request. An account's list is asked as `createAccountLists` says.
 */
export function createKeyLister(options: KeyListerOptions): KeyLister {
  const { gets, paths, logger, pageCount } = options;
  // The count the service accepted after refusing a larger one; none refused yet.
  let ceiling: number | undefined;
  const accounts = createAccountLists(options);

  async function ask(query: TxKeyQuery, count: number, call: CallOptions | undefined): Promise<TxKeyAnswer> {
    if (query.account === undefined) {
      return gets.getPage(
        'txsByKey',
        fillPath(paths.txsByKey) + keyPageQuery(query, count),
        parseTxKeyPage,
        call,
      );
    }
    return accounts.ask(query.account, query, count, call);
  }

  /** `ask` with the count the service accepts: halved after a refusal, the accepted one kept. */
  async function withAcceptedCount<T>(
    query: Pick<TxKeyQuery, 'count'>,
    ask: (count: number) => Promise<T>,
  ): Promise<T & { count: number }> {
    const asked = Math.min(query.count ?? pageCount, ceiling ?? Number.POSITIVE_INFINITY);
    let count = asked;
    for (;;) {
      try {
        const answer = await ask(count);
        if (count < asked) accept(asked, count);
        return { ...answer, count };
      } catch (error) {
        if (!isCountRefusal(error) || count <= MIN_KEY_COUNT) throw error;
        count = Math.max(MIN_KEY_COUNT, Math.floor(count / 2));
      }
    }
  }

  function accept(asked: number, accepted: number): void {
    if (ceiling !== undefined && ceiling <= accepted) return;
    ceiling = accepted;
    logger.warn(
      { asked, accepted },
      'the service refuses key pages of this many records; asking fewer from now on',
    );
  }

  return {
    txsByKey(query, call) {
      if (query.account === '') throw new TypeError('account must be a non-empty string');
      return withAcceptedCount(query, (count) => ask(query, count, call));
    },
    txsTextByKey(query, call) {
      return withAcceptedCount(query, (count) =>
        gets.getPage('txsByKey', fillPath(paths.txsByKey) + keyPageQuery(query, count), keyAnswerText, call),
      );
    },
    keyCount: () => Math.min(pageCount, ceiling ?? pageCount),
  };
}

/** An answer's text with its guess, not parsed: the parse elsewhere decides what it holds. */
function keyAnswerText(text: string, url: string): Omit<KeyAnswerText, 'count'> {
  return { text, guess: guessKeyAnswer(text), parse: () => parseTxKeyPage(text, url) };
}

/** A refusal that may be the count's: the service's limit on `count` is not documented. */
function isCountRefusal(error: unknown): boolean {
  return error instanceof HttpError && (error.status === 400 || error.status === 422);
}

/** The dialect probe and the configured dialect. */
export interface DialectProbe {
  /** One request, `GET {list}/txs?order=desc&count=1`: which dialect the service speaks. */
  detectPaging(call?: CallOptions): Promise<ListDialect>;
  /** The configured dialect; with `auto`, {@link DialectProbe.detectPaging}'s answer, asked once. */
  listDialect(call?: CallOptions): Promise<ListDialect>;
  /** With `auto`: the answer is known from before (kept by an earlier run); nothing is asked. */
  rememberDialect(dialect: ListDialect): void;
}

/** Creates the dialect probe over the list host's GETs; `onRequest` counts each probe sent. */
export function createDialectProbe(
  gets: ClientGets,
  paths: Pick<PathTemplates, 'txsByKey'>,
  paging: PagingMode,
  onRequest: () => void,
): DialectProbe {
  let detected: ListDialect | undefined;
  const detectPaging = (call?: CallOptions): Promise<ListDialect> => {
    onRequest();
    const path = fillPath(paths.txsByKey) + queryString({ order: 'desc', count: 1 });
    return gets.get('detectPaging', path, parseListDialect, call);
  };
  return {
    detectPaging,
    async listDialect(call) {
      if (paging !== 'auto') return paging;
      // Kept once known; callers asking before the first answer each send a probe of their own.
      detected ??= await detectPaging(call);
      return detected;
    },
    rememberDialect(dialect) {
      detected = dialect;
    },
  };
}
