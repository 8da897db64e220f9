/**
 * The table's side of `verify`'s list counts: how many stored records belong to a stream's list
 * (the global list, an account's, or a filtered one), by rawId range.
 */

import { type SQL, sql } from 'drizzle-orm';

import type { StreamSpec } from '../../domain/stream-key.js';
import { type Executor, queryRows, toNumber } from '../rows.js';

/** A stream: its key (which names its rejected records) and its list's filters. */
export type ListStream = StreamSpec & { key: string };

/**
 * Which stored transactions a filtered or per-account list holds, as the service lists them: the
 * account as sender or recipient, EVM addresses in any case; the token tag in any case.
 */
export function listConditions(stream: ListStream): SQL {
  const conditions = [sql`true`];
  if (stream.account !== undefined) {
    const evm = /^0x[0-9a-fA-F]{40}$/.test(stream.account);
    const account = evm ? stream.account.toLowerCase() : stream.account;
    conditions.push(
      evm
        ? sql`(lower(t.from_account) = ${account} OR lower(t.to_account) = ${account})`
        : sql`(t.from_account = ${account} OR t.to_account = ${account})`,
    );
  }
  if (stream.tokenTag !== undefined) conditions.push(sql`lower(t.token_tag) = lower(${stream.tokenTag})`);
  if (stream.action !== undefined) conditions.push(sql`t.action = ${stream.action}`);
  if (stream.withoutAction !== undefined) conditions.push(sql`t.action <> ${stream.withoutAction}`);
  return sql.join(conditions, sql` and `);
}

/** Whether the stream is the global list, unfiltered. */
export const isGlobal = (stream: ListStream) =>
  !stream.account && !stream.tokenTag && !stream.action && !stream.withoutAction;

/**
 * Records of the stream's list in the table with a rawId in `(above, atOrBelow]` (`above` null:
 * no lower bound): stored transactions the list holds, plus records set aside as rejected and
 * not stored: every one for the global list, the stream's own for another (a rejected record's
 * fields cannot be filtered).
 */
export async function countListStored(
  db: Executor,
  input: { stream: ListStream; above: number | null; atOrBelow: number },
): Promise<number> {
  const inRange = (column: SQL) =>
    input.above === null
      ? sql`${column} <= ${input.atOrBelow}`
      : sql`${column} > ${input.above} and ${column} <= ${input.atOrBelow}`;
  const global = isGlobal(input.stream);
  const transactions = global ? sql`true` : listConditions(input.stream);
  const rejected = global ? sql`true` : seenBy(input.stream.key);
  const rows = await queryRows<{ n: unknown }>(
    db,
    sql`select (select count(*) from ledger_transactions t where ${inRange(sql`t.raw_id`)} and ${transactions})
             + (select count(distinct r.raw_id) from rejected_records r
                where ${inRange(sql`r.raw_id`)} and ${rejected}
                  and not exists (select 1 from ledger_transactions t where t.raw_id = r.raw_id)) as n`,
  );
  return toNumber(rows[0]?.n) ?? 0;
}

/** Records of the stream's list in the table at or below `rawId`, and in all. */
export async function countStoredForStream(
  db: Executor,
  input: { stream: ListStream; rawId: number },
): Promise<{ atOrBelow: number; total: number }> {
  const atOrBelow = await countListStored(db, { stream: input.stream, above: null, atOrBelow: input.rawId });
  const total = await countListStored(db, {
    stream: input.stream,
    above: null,
    atOrBelow: Number.MAX_SAFE_INTEGER,
  });
  return { atOrBelow, total };
}

/**
 * Records of the stream's list at or below `atOrBelow` that the table holds only as rejected
 * records (readable rawId, a field malformed): the part of {@link countListStored}'s figure set
 * aside in `rejected_records` with a reason.
 */
export async function countListSetAside(
  db: Executor,
  input: { stream: ListStream; atOrBelow: number },
): Promise<number> {
  const rejected = isGlobal(input.stream) ? sql`true` : seenBy(input.stream.key);
  const rows = await queryRows<{ n: unknown }>(
    db,
    sql`select count(distinct r.raw_id) as n from rejected_records r
        where r.raw_id <= ${input.atOrBelow} and ${rejected}
          and not exists (select 1 from ledger_transactions t where t.raw_id = r.raw_id)`,
  );
  return toNumber(rows[0]?.n) ?? 0;
}

/**
 * Records kept without a readable rawId (they cannot be keyed): every one for the global list,
 * those the stream saw for another. A record whose text changed between reads (its status) is
 * kept once per text, and counted once, by its ledgerHash where it has one.
 */
export async function countUnkeyableKept(db: Executor, stream: ListStream): Promise<number> {
  const rejected = isGlobal(stream) ? sql`true` : seenBy(stream.key);
  const rows = await queryRows<{ n: unknown }>(
    db,
    sql`select count(distinct coalesce(r.ledger_hash, r.fingerprint)) as n
        from rejected_records r where r.raw_id is null and ${rejected}`,
  );
  return toNumber(rows[0]?.n) ?? 0;
}

/** Rejected records (`r`) the stream saw: by `stream_keys`, or `stream_key` for rows older than it. */
export function seenBy(key: string): SQL {
  return sql`(r.stream_key = ${key} or ${key} = any (r.stream_keys))`;
}
