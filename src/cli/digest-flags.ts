import type { DigestQuery } from '../digest/range-digest.js';
import { UsageError } from '../errors.js';
import { intFlag } from './command.js';

/** The largest `--range-size`: a range is hashed whole, so one range may be the whole ledger. */
const MAX_RANGE_SIZE = 100_000_000;

/** `--from`, `--to` and `--range-size` as a digest query; a bad value is a {@link UsageError} naming its flag. */
export function digestQueryFlags(values: {
  from?: string | undefined;
  to?: string | undefined;
  'range-size'?: string | undefined;
}): DigestQuery {
  const from = intFlag('from', values.from, 0, Number.MAX_SAFE_INTEGER);
  const to = intFlag('to', values.to, 0, Number.MAX_SAFE_INTEGER);
  const rangeSize = intFlag('range-size', values['range-size'], 1, MAX_RANGE_SIZE);
  if (to !== undefined && to < (from ?? 0))
    throw new UsageError(`--to must be at least --from (got --from ${from ?? 0} --to ${to})`);
  return { from, to, rangeSize };
}
