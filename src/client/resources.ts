import type { LedgerToken } from '../domain/model.js';
import { MalformedResponseError } from '../errors.js';
import type {
  LedgerAccountBalance,
  LedgerBalance,
  LedgerBalances,
  LedgerFee,
  LedgerInfo,
  SubmitTxResult,
} from './api-types.js';
import { parseJsonObject } from './page.js';
import { describe, isNonNegativeSafeInteger, isObject } from './record.js';

const DIGITS = /^\d+$/;

/** Raised inside the parsers below and turned into a {@link MalformedResponseError} with the URL. */
class Problem extends Error {}

function guard<T>(bodyText: string, url: string, parse: (body: Record<string, unknown>) => T): T {
  const body = parseJsonObject(bodyText, url);
  try {
    return parse(body);
  } catch (error) {
    if (error instanceof Problem) throw new MalformedResponseError(url, error.message, bodyText);
    throw error;
  }
}

/** Parses `/info`: `tokenList[]` typed, the whole answer kept in `raw`. */
export function parseInfo(bodyText: string, url: string): LedgerInfo {
  return guard(bodyText, url, (body) => {
    const list = body['tokenList'];
    if (!Array.isArray(list)) throw new Problem(`tokenList is ${describe(list)}, not an array`);
    return { tokenList: list.map((token, index) => parseToken(token, index)), raw: body };
  });
}

/** Parses `/balances/{account}`: `{accid, balances: [{tag, amount, decimals}]}`. */
export function parseBalances(bodyText: string, url: string): LedgerBalances {
  return guard(bodyText, url, (body) => {
    const list = body['balances'] ?? [];
    if (!Array.isArray(list)) throw new Problem(`balances is ${describe(list)}, not an array`);
    return {
      accid: str(body, 'accid'),
      balances: list.map((item, index) => parseBalance(item, `balances[${index}]`)),
    };
  });
}

/** Parses `/balance/{tag}/{account}`: `{accid, balance: {tag, amount, decimals}}`. */
export function parseAccountBalance(bodyText: string, url: string): LedgerAccountBalance {
  return guard(bodyText, url, (body) => ({
    accid: str(body, 'accid'),
    balance: parseBalance(body['balance'], 'balance'),
  }));
}

/** Parses `/fees`: `{fees: [{tokenTag, transferFee, bundleFee, burnFeeMap}]}`. */
export function parseFees(bodyText: string, url: string): LedgerFee[] {
  return guard(bodyText, url, (body) => {
    const list = body['fees'];
    if (!Array.isArray(list)) throw new Problem(`fees is ${describe(list)}, not an array`);
    return list.map((item, index) => parseFee(item, `fees[${index}]`));
  });
}

/** Parses `/fee/{tag}`: `{fee: {tokenTag, transferFee, bundleFee, burnFeeMap}}`. */
export function parseOneFee(bodyText: string, url: string): LedgerFee {
  return guard(bodyText, url, (body) => parseFee(body['fee'], 'fee'));
}

/** Parses the answer of `POST /tx`: `{"status":"ok"}`. */
export function parseSubmitResult(bodyText: string, url: string): SubmitTxResult {
  return guard(bodyText, url, (body) => ({ status: str(body, 'status'), raw: body }));
}

/** A Tools answer: its JSON when it is JSON, else the text itself (the shapes are not documented). */
export function parseToolAnswer(bodyText: string): unknown {
  try {
    return JSON.parse(bodyText);
  } catch {
    return bodyText;
  }
}

function parseToken(value: unknown, index: number): LedgerToken {
  const where = `tokenList[${index}]`;
  if (!isObject(value)) throw new Problem(`${where} is ${describe(value)}, not an object`);
  const tag = value['tag'];
  if (typeof tag !== 'string' || tag === '') throw new Problem(`${where}.tag is ${describe(tag)}`);
  return {
    tag,
    symbol: optionalStr(value, 'symbol', where),
    decimals: decimals(value['decimals'], `${where}.decimals`),
    chainType: optionalStr(value, 'chainType', where),
    chainID: optionalStr(value, 'chainID', where),
    id: optionalStr(value, 'id', where),
    raw: value,
  };
}

function parseBalance(value: unknown, where: string): LedgerBalance {
  if (!isObject(value)) throw new Problem(`${where} is ${describe(value)}, not an object`);
  return {
    tag: str(value, 'tag', where),
    amount: digits(value['amount'], `${where}.amount`),
    decimals: decimals(value['decimals'], `${where}.decimals`),
  };
}

function parseFee(value: unknown, where: string): LedgerFee {
  if (!isObject(value)) throw new Problem(`${where} is ${describe(value)}, not an object`);
  const map = value['burnFeeMap'] ?? {};
  if (!isObject(map)) throw new Problem(`${where}.burnFeeMap is ${describe(map)}, not an object`);
  const burnFeeMap: Record<string, string> = {};
  for (const [chain, fee] of Object.entries(map))
    burnFeeMap[chain] = digits(fee, `${where}.burnFeeMap.${chain}`);
  return {
    tokenTag: str(value, 'tokenTag', where),
    transferFee: digits(value['transferFee'], `${where}.transferFee`),
    bundleFee: digits(value['bundleFee'], `${where}.bundleFee`),
    burnFeeMap,
  };
}

function str(record: Record<string, unknown>, key: string, where?: string): string {
  const value = record[key];
  if (typeof value !== 'string')
    throw new Problem(`${where ? `${where}.` : ''}${key} is ${describe(value)}, not a string`);
  return value;
}

function optionalStr(record: Record<string, unknown>, key: string, where: string): string {
  const value = record[key];
  if (value === undefined || value === null) return '';
  if (typeof value !== 'string') throw new Problem(`${where}.${key} is ${describe(value)}, not a string`);
  return value;
}

function digits(value: unknown, where: string): string {
  if (typeof value !== 'string' || !DIGITS.test(value)) {
    throw new Problem(`${where} is ${describe(value)}, not a decimal digit string`);
  }
  return value;
}

function decimals(value: unknown, where: string): number {
  if (isNonNegativeSafeInteger(value)) return value;
  if (typeof value === 'string' && /^\d{1,3}$/.test(value)) return Number(value);
  throw new Problem(`${where} is ${describe(value)}, not a whole number`);
}
