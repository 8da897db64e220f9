/**
 * Lags of the status-freshness scenario: from each change at the service (the simulator's ground
 * truth says when a record was packaged and when a burn's target hash landed) to the row showing it.
 */
import { createReadStream } from 'node:fs';
import { createInterface } from 'node:readline';
import type { ScenarioDatabase } from './databases.js';
import { round } from './figures.js';
import { percentile } from './freshness.js';

/** Lags of one kind of change, ms. */
export interface LagFigures {
  /** Changes that happened at the service (reflected or not). */
  changes: number;
  /** Changes the mirror never showed by the end. */
  missed: number;
  /** Of the changes reflected; NaN (null in JSON) when none was. */
  p50: number;
  p95: number;
  max: number;
}

export interface StatusLags {
  packaged: LagFigures;
  targetHash: LagFigures;
  all: LagFigures;
}

/** A record's change times from the ground truth (wall-clock ms; null: has not happened). */
export interface TruthChange {
  rawId: number;
  /** A burn: its target-chain hash lands after its packaging. */
  burn: boolean;
  packagedAtMs: number | null;
  targetLandedAtMs: number | null;
}

/** When the mirror first showed each change (wall-clock ms; null: not yet). */
export interface ReflectedChange {
  packagedMs: number | null;
  targetMs: number | null;
}

/** The change times of the records after `afterRawId` in a ground-truth NDJSON dump. */
export async function readChanges(file: string, afterRawId: number): Promise<TruthChange[]> {
  const changes: TruthChange[] = [];
  for await (const line of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    if (line === '') continue;
    const record = JSON.parse(line) as Omit<TruthChange, 'burn'> & { action: string };
    if (record.rawId <= afterRawId) continue;
    const { rawId, packagedAtMs, targetLandedAtMs } = record;
    changes.push({ rawId, burn: record.action === 'burn', packagedAtMs, targetLandedAtMs });
  }
  return changes;
}

/**
 * When each row after `afterRawId` first showed its changes: its first `packaged` status-history
 * row (or, for a record final when first stored, which has none, its `first_seen_at`), and for a
 * row holding a target-chain hash its `updated_at`. The upsert moves `updated_at` only when a
 * stored value differs, and the hash is a burn's last change at the service, so `updated_at` is
 * when the hash arrived.
 */
export async function readReflected(
  database: ScenarioDatabase,
  afterRawId: number,
): Promise<Map<number, ReflectedChange>> {
  const rows = await database.query<{ raw_id: string; packaged_ms: number | null; target_ms: number | null }>(
    `SELECT t.raw_id::text AS raw_id,
       coalesce((SELECT extract(epoch FROM min(h.observed_at)) * 1000 FROM ledger_tx_status_history h
         WHERE h.raw_id = t.raw_id AND h.status = 'packaged'),
         CASE WHEN t.status = 'packaged' THEN extract(epoch FROM t.first_seen_at) * 1000 END)::float8 AS packaged_ms,
       CASE WHEN t.target_chain_tx_hash <> '' THEN extract(epoch FROM t.updated_at) * 1000 END::float8 AS target_ms
     FROM ledger_transactions t WHERE t.raw_id > $1`,
    [afterRawId],
  );
  return new Map(rows.map((r) => [Number(r.raw_id), { packagedMs: r.packaged_ms, targetMs: r.target_ms }]));
}

/** Lags per kind of change and overall; a change with no reflection counts as missed. */
export function lagsOf(
  changes: readonly TruthChange[],
  reflected: ReadonlyMap<number, ReflectedChange>,
): StatusLags {
  const packaged: number[] = [];
  const target: number[] = [];
  let missedPackaged = 0;
  let missedTarget = 0;
  for (const change of changes) {
    const row = reflected.get(change.rawId);
    if (change.packagedAtMs !== null) {
      if (row?.packagedMs == null) missedPackaged++;
      // A row cannot show a change before it happened; below 0 is the clocks' rounding.
      else packaged.push(Math.max(0, row.packagedMs - change.packagedAtMs));
    }
    if (change.targetLandedAtMs !== null) {
      if (row?.targetMs == null) missedTarget++;
      else target.push(Math.max(0, row.targetMs - change.targetLandedAtMs));
    }
  }
  return {
    packaged: lagFigures(packaged, missedPackaged),
    targetHash: lagFigures(target, missedTarget),
    all: lagFigures([...packaged, ...target], missedPackaged + missedTarget),
  };
}

function lagFigures(values: number[], missed: number): LagFigures {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    changes: values.length + missed,
    missed,
    p50: round(percentile(sorted, 0.5), 0),
    p95: round(percentile(sorted, 0.95), 0),
    max: round(sorted.at(-1) ?? Number.NaN, 0),
  };
}
