/**
 * The read API's list filters as SQL over `ledger_transactions t`, each served by an index: the
 * account by its columns (`lower(…)` for an EVM address), tags by `token_tag`, the action by
 * `action`, the time range by `ledger_time`. Values travel as parameters only.
 */
import { type SQL, sql } from 'drizzle-orm';
import { textArray } from '../../text-array.js';

/** Which records a list holds: the service's filters, and the mirror's time range. */
export interface RecordFilter {
  /** Records sent or received by this account (EVM addresses in any case); undefined = all. */
  account?: string | undefined;
  /** Any of these token tags; undefined = any token, empty = none. */
  tags?: readonly string[] | undefined;
  action?: string | undefined;
  withoutAction?: string | undefined;
  /** Ledger time at or after this (ISO); records not packaged yet (time 0) are left out. */
  since?: string | undefined;
  /** Ledger time before this (ISO). */
  until?: string | undefined;
  /** Records at or below this rawId only: where the answering stream is known complete. */
  upTo?: number | undefined;
}

const EVM_ACCOUNT = /^0x[0-9a-fA-F]{40}$/;

/**
 * `column` names `account`, as the service matches accounts: an EVM address in any case, through
 * the column's `lower(…)` index; another id exactly, through the column's own index. One
 * condition either way, whose statistics the planner reads right.
 */
export function accountMatch(column: SQL, account: string): SQL {
  return EVM_ACCOUNT.test(account)
    ? sql`lower(${column}) = ${account.toLowerCase()}`
    : sql`${column} = ${account}`;
}

/**
 * As {@link accountMatch}, for a column with only a `lower(…)` index (the fee recipient): an id
 * other than an EVM address is found through it, then checked exactly.
 */
export function accountMatchByLowerCase(column: SQL, account: string): SQL {
  const lower = account.toLowerCase();
  return EVM_ACCOUNT.test(account)
    ? sql`lower(${column}) = ${lower}`
    : sql`(lower(${column}) = ${lower} AND ${column} = ${account})`;
}

/** `account` as the sender and as the receiver of a record of `ledger_transactions t`, each in parentheses. */
export function accountSides(account: string): { sender: SQL; receiver: SQL } {
  return {
    sender: sql`(${accountMatch(sql.raw('t.from_account'), account)})`,
    receiver: sql`(${accountMatch(sql.raw('t.to_account'), account)})`,
  };
}

/** The WHERE condition of `filter` (`true` when it filters nothing). */
export function filterSql(filter: RecordFilter): SQL {
  const parts: SQL[] = [];
  if (filter.account !== undefined) {
    const { sender, receiver } = accountSides(filter.account);
    parts.push(sql`(${sender} OR ${receiver})`);
  }
  if (filter.tags !== undefined) {
    parts.push(
      filter.tags.length === 0 ? sql`false` : sql`t.token_tag = ANY (${textArray([...filter.tags])}::text[])`,
    );
  }
  if (filter.action !== undefined) parts.push(sql`t.action = ${filter.action}`);
  if (filter.withoutAction !== undefined) parts.push(sql`t.action <> ${filter.withoutAction}`);
  if (filter.since !== undefined) parts.push(sql`t.ledger_time >= ${filter.since}::timestamptz`);
  if (filter.until !== undefined) parts.push(sql`t.ledger_time < ${filter.until}::timestamptz`);
  if (filter.upTo !== undefined) parts.push(sql`t.raw_id <= ${filter.upTo}`);
  return parts.length === 0 ? sql`true` : sql.join(parts, sql` AND `);
}
