/**
 * Read-only queries over `ledger_tx_conflicts` for `status` and `verify`: records the service
 * served again with immutable fields different from the stored ones.
 */
import { sql } from 'drizzle-orm';
import { type Executor, queryRows, toDate } from '../rows.js';
import { IMMUTABLE_COLUMNS, type ImmutableColumn } from '../schema/immutable-columns.js';
import { textArray } from '../text-array.js';

/** Conflicts recorded and not resolved, per stream key (`null`: found by a re-read by hash). */
export async function countConflictsByStream(executor: Executor): Promise<Map<string | null, number>> {
  const rows = await queryRows<{ stream_key: string | null; n: number }>(
    executor,
    sql`SELECT stream_key, count(*)::int AS n FROM ledger_tx_conflicts WHERE resolved_at IS NULL GROUP BY stream_key`,
  );
  return new Map(rows.map((r) => [r.stream_key, Number(r.n)]));
}

/** How many conflicts are open (not resolved), and the first `limit` (at least 1) of them by rawId with both versions. */
export async function readConflicts(
  executor: Executor,
  limit: number,
): Promise<{ total: number; conflicts: ConflictReport[] }> {
  const rows = await queryRows<Record<string, unknown>>(
    executor,
    sql`
    SELECT raw_id::text AS raw_id, fields, stored::text AS stored, served::text AS served, stream_key, page,
           detected_at, seen_count, count(*) OVER ()::int AS total
    FROM ledger_tx_conflicts
    WHERE resolved_at IS NULL
    ORDER BY ledger_tx_conflicts.raw_id, detected_at
    LIMIT ${Math.max(1, limit)}::int
    `,
  );
  const conflicts = rows.map((r) => ({
    rawId: Number(r['raw_id']),
    fields: parseTextArray(r['fields']),
    stream: (r['stream_key'] as string | null) ?? null,
    page: r['page'] === null ? null : Number(r['page']),
    detectedAt: (toDate(r['detected_at']) ?? new Date(0)).toISOString(),
    seenCount: Number(r['seen_count']),
    stored: JSON.parse(String(r['stored'])) as Record<string, unknown>,
    served: JSON.parse(String(r['served'])) as Record<string, unknown>,
  }));
  return { total: Number(rows[0]?.['total'] ?? 0), conflicts };
}

/**
 * The served versions of `rawIds` an operator resolved (the stored version stands), their
 * immutable columns as text, by rawId.
 */
export async function selectResolvedVersions(
  executor: Executor,
  rawIds: readonly number[],
): Promise<Map<number, Array<Record<ImmutableColumn, string>>>> {
  const resolved = new Map<number, Array<Record<ImmutableColumn, string>>>();
  if (rawIds.length === 0) return resolved;
  // Each column as the text PostgreSQL writes it: a numeric's digits exact, never a JS number.
  const columns = sql.raw(IMMUTABLE_COLUMNS.map((c) => `served->>'${c}' AS ${c}`).join(', '));
  const rows = await queryRows<Record<string, unknown>>(
    executor,
    sql`SELECT raw_id::text AS raw_id, ${columns} FROM ledger_tx_conflicts
        WHERE resolved_at IS NOT NULL AND raw_id = any(${textArray(rawIds.map(String))}::bigint[])`,
  );
  for (const row of rows) {
    const values = Object.fromEntries(IMMUTABLE_COLUMNS.map((c) => [c, String(row[c] ?? '')]));
    const rawId = Number(row['raw_id']);
    resolved.set(rawId, [...(resolved.get(rawId) ?? []), values as Record<ImmutableColumn, string>]);
  }
  return resolved;
}

/** A text[] as the drivers return it: an array (pg) or its literal `{a,b}` (some paths). */
function parseTextArray(value: unknown): string[] {
  if (Array.isArray(value)) return value.map(String);
  const text = String(value ?? '');
  return text
    .replace(/^\{|\}$/g, '')
    .split(',')
    .filter((s) => s !== '');
}

/** A recorded conflict, as `verify` lists it. */
export interface ConflictReport {
  rawId: number;
  /** The columns that differ (`amount`, `ledger_hash`, …). */
  fields: string[];
  /** Stream and page that served it first; null for a re-read by hash. */
  stream: string | null;
  page: number | null;
  detectedAt: string;
  seenCount: number;
  /** The version kept and the version served instead, as columns. */
  stored: Record<string, unknown>;
  served: Record<string, unknown>;
}
