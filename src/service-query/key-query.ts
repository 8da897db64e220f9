/**
 * Which list dialect a server speaks: `page` (the interface document's page numbers only),
 * `key` (the deployed key dialect only: `cursor`, `order`, `count`) or `both` (key when a
 * request carries a key parameter, page numbers otherwise).
 */
export type PagingMode = 'page' | 'key' | 'both';

/** The dialect one list request is answered in. */
export type ListDialect = 'page' | 'key';

export const PAGING_MODES: readonly PagingMode[] = ['page', 'key', 'both'];

/** Records a key page holds when the request names no `count`. */
export const DEFAULT_KEY_COUNT = 10;

/** Limits on `count` a deployment may impose on key requests. */
export interface KeyLimits {
  /** At most this many records per key page, whatever was asked (a silent cap); 0 = none. */
  maxCount: number;
  /** A key request asking more than this is refused with 400 `err_invalid_count`; 0 = none. */
  refuseCountAbove: number;
}

/** A valid key request: where to start, which way, how many. */
export interface KeyQuery {
  /** Exclusive rawId to start after (asc) or before (desc); undefined = the start or the head. */
  cursor: number | undefined;
  order: 'asc' | 'desc';
  /** Records to serve, after the silent cap. */
  count: number;
}

/** A refused key request: the `err_…` code answered with HTTP 400. */
export interface KeyQueryError {
  error: 'err_invalid_cursor' | 'err_invalid_order' | 'err_invalid_count';
}

/** The dialect a list request is answered in, under the server's paging mode. */
export function listDialect(mode: PagingMode, params: URLSearchParams): ListDialect {
  if (mode !== 'both') return mode;
  return params.has('cursor') || params.has('order') || params.has('count') ? 'key' : 'page';
}

/** The page dialect's `page`: absent or empty = 1; else 1 to 9 digits, at least 1; undefined when invalid. */
export function parsePage(value: string | null): number | undefined {
  if (value === null || value === '') return 1;
  if (!/^\d{1,9}$/.test(value) || Number(value) < 1) return undefined;
  return Number(value);
}

/** A whole number of at most 15 digits (safe), or undefined. */
function wholeNumber(text: string): number | undefined {
  return /^\d{1,15}$/.test(text) ? Number(text) : undefined;
}

/**
 * Reads the key parameters as the deployed service does: `cursor` exclusive, absent, empty or 0
 * meaning the start (asc) or the head (desc); `order` `asc`/`desc` in any case, default `desc`;
 * `count` default {@link DEFAULT_KEY_COUNT} (0 counts as absent: clients send it only when > 0),
 * then refused above `refuseCountAbove` and cut to `maxCount`.
 */
export function parseKeyQuery(params: URLSearchParams, limits: KeyLimits): KeyQuery | KeyQueryError {
  const cursorText = params.get('cursor') ?? '';
  const cursor = cursorText === '' ? 0 : wholeNumber(cursorText);
  if (cursor === undefined) return { error: 'err_invalid_cursor' };
  const orderText = (params.get('order') ?? '').toLowerCase();
  const order = orderText === '' ? 'desc' : orderText;
  if (order !== 'asc' && order !== 'desc') return { error: 'err_invalid_order' };
  const countText = params.get('count') ?? '';
  const asked = countText === '' ? 0 : wholeNumber(countText);
  if (asked === undefined) return { error: 'err_invalid_count' };
  const count = asked === 0 ? DEFAULT_KEY_COUNT : asked;
  if (limits.refuseCountAbove > 0 && count > limits.refuseCountAbove) return { error: 'err_invalid_count' };
  return {
    cursor: cursor === 0 ? undefined : cursor,
    order,
    count: limits.maxCount > 0 ? Math.min(count, limits.maxCount) : count,
  };
}

export function isKeyQueryError(value: KeyQuery | KeyQueryError): value is KeyQueryError {
  return 'error' in value;
}
