import type { LedgerTx, RejectedRecord, TxPage } from '../domain/model.js';
import { markScreened, screensClean } from '../domain/screened-text.js';
import { MalformedResponseError } from '../errors.js';
import type { ListDialect, TxKeyAnswer } from './api-types.js';
import { describe, isNonNegativeSafeInteger, isObject, parseTxRecord, tryParseTxRecord } from './record.js';

/**
 * Parses a `/txs` or `/txsByAccount/{account}` answer. The page itself must be sound (JSON, an
 * object, integer `currentPage` and `totalPages`, `txs` an array, `null` or absent): otherwise
 * {@link MalformedResponseError}. Each record is validated on its own; the ones that fail go to
 * `rejected` with the reason and their raw JSON, and the others are returned.
 */
export function parseTxPage(bodyText: string, url: string): TxPage {
  const body = parseJsonObject(bodyText, url);
  const currentPage = body['currentPage'];
  const totalPages = body['totalPages'];
  if (!isNonNegativeSafeInteger(currentPage)) {
    throw new MalformedResponseError(
      url,
      `currentPage is ${describe(currentPage)}, not an integer`,
      bodyText,
    );
  }
  if (!isNonNegativeSafeInteger(totalPages)) {
    throw new MalformedResponseError(url, `totalPages is ${describe(totalPages)}, not an integer`, bodyText);
  }
  const accid = body['accid'];
  if (accid !== undefined && accid !== null && typeof accid !== 'string') {
    throw new MalformedResponseError(url, `accid is ${describe(accid)}, not a string`, bodyText);
  }
  const { txs, rejected } = parseRecords(body['txs'], url, bodyText);
  const page: TxPage = { currentPage, totalPages, txs, rejected };
  if (typeof accid === 'string') page.accid = accid;
  return page;
}

/**
 * Parses a key-paging answer `{txs, hasNextPage}`. A missing `hasNextPage` is malformed: guessing
 * it would either stop a walk early or never end it.
 */
export function parseTxKeyPage(bodyText: string, url: string): TxKeyAnswer {
  const body = parseJsonObject(bodyText, url);
  const hasNextPage = body['hasNextPage'];
  if (typeof hasNextPage !== 'boolean') {
    const hint =
      hasNextPage === undefined && 'currentPage' in body ? ' (a page-number answer: no key paging here)' : '';
    throw new MalformedResponseError(
      url,
      `hasNextPage is ${describe(hasNextPage)}, not a boolean${hint}`,
      bodyText,
    );
  }
  return { ...parseRecords(body['txs'], url, bodyText), hasNextPage, text: bodyText };
}

/**
 * Parses the answer of the dialect probe (`/txs?order=desc&count=1`): a numeric `totalPages` is a
 * page-number server (which ignores the key parameters and answers page 1); a boolean
 * `hasNextPage` without it is a key-paging server. Anything else is a {@link MalformedResponseError}.
 */
export function parseListDialect(bodyText: string, url: string): ListDialect {
  const body = parseJsonObject(bodyText, url);
  if (typeof body['totalPages'] === 'number') return 'page';
  if (typeof body['hasNextPage'] === 'boolean') return 'key';
  throw new MalformedResponseError(
    url,
    'neither totalPages nor hasNextPage: no known list dialect',
    bodyText,
  );
}

/**
 * Parses a single look-up (`/txsByHash/…`, `/mintedTxByChainTxHash/…`): `{tx: record}`, or the
 * bare record from deployments that send it unwrapped. Throws `InvalidRecordError` when the
 * record is malformed and {@link MalformedResponseError} when there is no record at all.
 */
export function parseSingleTx(bodyText: string, url: string): LedgerTx {
  const body = parseJsonObject(bodyText, url);
  if ('tx' in body) {
    if (!isObject(body['tx'])) {
      throw new MalformedResponseError(url, `tx is ${describe(body['tx'])}, not a record`, bodyText);
    }
    return parseTxRecord(body['tx']);
  }
  if ('rawId' in body || 'ledgerHash' in body) return parseTxRecord(body);
  throw new MalformedResponseError(url, 'the answer holds no tx record', bodyText);
}

/** Parses JSON text that must be an object; anything else is a {@link MalformedResponseError}. */
export function parseJsonObject(bodyText: string, url: string): Record<string, unknown> {
  let body: unknown;
  try {
    body = JSON.parse(bodyText);
  } catch {
    throw new MalformedResponseError(url, 'body is not JSON', bodyText);
  }
  if (!isObject(body))
    throw new MalformedResponseError(url, `body is ${describe(body)}, not an object`, bodyText);
  return body;
}

function parseRecords(
  value: unknown,
  url: string,
  bodyText: string,
): { txs: LedgerTx[]; rejected: RejectedRecord[] } {
  const txs: LedgerTx[] = [];
  const rejected: RejectedRecord[] = [];
  if (value === undefined || value === null) return { txs, rejected };
  if (!Array.isArray(value))
    throw new MalformedResponseError(url, `txs is ${describe(value)}, not an array`, bodyText);
  const clean = screensClean(bodyText);
  for (let index = 0; index < value.length; index++) {
    const result = tryParseTxRecord(value[index]);
    if (result.ok) {
      if (clean) markScreened(result.tx);
      txs.push(result.tx);
    } else rejected.push({ ...result.rejected, index });
  }
  return { txs, rejected };
}
