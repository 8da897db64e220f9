/** Warnings for records that are not what their sender signed: stored anyway, logged once per page. */
import type { Logger } from '../../logger.js';

import type { ServedRecord } from './record-write-sql.js';

/** rawIds listed in one warning; the count is always given. */
const LISTED = 10;

/** The rawIds of a batch whose hash or signature check failed. */
export function integrityMismatches(records: readonly ServedRecord[]): {
  hash: number[];
  signature: number[];
} {
  const hash: number[] = [];
  const signature: number[] = [];
  for (const { row } of records) {
    if (row.hash_check === 'mismatch') hash.push(row.raw_id);
    if (row.signature_check === 'mismatch') signature.push(row.raw_id);
  }
  return { hash, signature };
}

/** One warning for the batch (a page, or a commit of a range's pages) when any record failed a check. */
export function warnIntegrityMismatches(
  logger: Logger | undefined,
  context: Record<string, unknown>,
  records: readonly ServedRecord[],
): void {
  warnMismatches(logger, context, integrityMismatches(records));
}

/** {@link warnIntegrityMismatches} of the rawIds whose hash or signature check failed. */
export function warnMismatches(
  logger: Logger | undefined,
  context: Record<string, unknown>,
  mismatches: { hash: readonly number[]; signature: readonly number[] },
): void {
  const { hash, signature } = mismatches;
  if (hash.length === 0 && signature.length === 0) return;
  logger?.warn(
    {
      ...context,
      hash_mismatches: hash.length,
      signature_mismatches: signature.length,
      raw_ids: [...new Set([...hash, ...signature])].slice(0, LISTED),
    },
    'records not matching what their sender signed: stored, flagged in hash_check / signature_check',
  );
}
