/**
 * An account's list by key: asked as `/txs?address=` or `/txs/{account}` (`LEDGER_ACCOUNT_LISTS`).
 * In `auto` the other form is tried on a 404, and the one that answers is tried first from then
 * on; and once, when an `address=` answer lists a record that does not name the account (a
 * service that ignores the parameter answers with its global list).
 */
import type { AccountListForm } from '../config.js';
import type { Logger } from '../logger.js';
import { fillPath, type PathTemplates } from './api-paths.js';
import type { TxKeyAnswer, TxKeyQuery } from './api-types.js';
import type { CallOptions } from './call-options.js';
import { isNotFound } from './http.js';
import type { ClientGets } from './ledger-calls.js';
import { keyPageQuery } from './list-query.js';
import { parseTxKeyPage } from './page.js';

type AccountForm = Exclude<AccountListForm, 'auto'>;

/** Asks one answer of an account's list by key. */
export interface AccountLists {
  ask(account: string, query: TxKeyQuery, count: number, call: CallOptions | undefined): Promise<TxKeyAnswer>;
}

/** Creates the account lists of one client: the form found is kept for every account. */
export function createAccountLists(options: {
  gets: ClientGets;
  paths: Pick<PathTemplates, 'txsByKey' | 'txsByKeyAccount'>;
  accountLists: AccountListForm;
  logger: Logger;
}): AccountLists {
  const { gets, paths, logger } = options;
  const auto = options.accountLists === 'auto';
  // The account-list form that answered last (auto), or the configured one.
  let accountForm: AccountForm | undefined =
    options.accountLists === 'auto' ? undefined : options.accountLists;
  // Whether `/txs/{account}` was tried because `address=` listed other accounts' records (auto).
  let pathTried = false;

  function accountPath(form: AccountForm, account: string, query: TxKeyQuery, count: number): string {
    return form === 'address'
      ? fillPath(paths.txsByKey) + keyPageQuery(query, count, account)
      : fillPath(paths.txsByKeyAccount, { account }) + keyPageQuery(query, count);
  }

  async function ask(
    account: string,
    query: TxKeyQuery,
    count: number,
    call: CallOptions | undefined,
  ): Promise<TxKeyAnswer> {
    const first = accountForm ?? 'address';
    const forms: AccountForm[] = auto ? [first, first === 'address' ? 'path' : 'address'] : [first];
    let firstNotFound: unknown;
    for (const form of forms) {
      try {
        const answer = await gets.getPage(
          'txsByKey',
          accountPath(form, account, query, count),
          parseTxKeyPage,
          call,
        );
        if (form === 'address' && auto && !pathTried && !listsAccount(answer, account)) {
          pathTried = true;
          return await unfilteredAddress(answer, account, query, count, call);
        }
        settle(form);
        return answer;
      } catch (error) {
        if (!isNotFound(error)) throw error;
        firstNotFound ??= error;
      }
    }
    throw firstNotFound;
  }

  function settle(form: AccountForm, why?: string): void {
    if (accountForm === form) return;
    if (form !== 'address') {
      logger.info(
        { form, ...(why === undefined ? {} : { why }) },
        'the service answers key-paging account lists at /txs/{account}; using it from now on',
      );
    }
    accountForm = form;
  }

  /**
   * `address=` answered with records of other accounts (asked once): a service that ignores the
   * parameter answers with its global list. `/txs/{account}` is read instead when it answers by
   * key; else the address form stays, whatever it lists.
   */
  async function unfilteredAddress(
    answer: TxKeyAnswer,
    account: string,
    query: TxKeyQuery,
    count: number,
    call: CallOptions | undefined,
  ): Promise<TxKeyAnswer> {
    try {
      const own = await gets.getPage(
        'txsByKey',
        accountPath('path', account, query, count),
        parseTxKeyPage,
        call,
      );
      settle('path', 'address= answered with records of other accounts');
      return own;
    } catch (error) {
      if (call?.signal?.aborted) throw error;
      logger.warn(
        { err: error },
        'the service answers /txs?address= with records of other accounts, and /txs/{account} not by key; reading address= as the account list',
      );
      settle('address');
      return answer;
    }
  }

  return { ask };
}

/**
 * Whether an account's answer could be its list: every record names the account (sender,
 * recipient, fee recipient, or in `data`, where a bundle's items are; EVM addresses compared
 * without case).
 */
function listsAccount(answer: TxKeyAnswer, account: string): boolean {
  const folded = account.toLowerCase();
  return answer.txs.every(
    (tx) =>
      tx.from.toLowerCase() === folded ||
      tx.to.toLowerCase() === folded ||
      tx.feeRecipient.toLowerCase() === folded ||
      tx.data.toLowerCase().includes(folded),
  );
}
