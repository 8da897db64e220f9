/**
 * The wanted periodic jobs (`sync_schedules`), per queue prefix: what `schedule` asked for, kept
 * in PostgreSQL so workers can register the BullMQ job schedulers again after Redis lost them.
 */
import { sql } from 'drizzle-orm';
import { type Executor, queryRows } from '../rows.js';

/** One wanted periodic job: its BullMQ scheduler id, job name, payload and period. */
export interface ScheduleRow {
  id: string;
  name: string;
  data: unknown;
  everyMs: number;
}

/** Upserts the wanted schedules of a queue prefix (others of the prefix stay, as in Redis). */
export async function saveSchedules(
  executor: Executor,
  input: { prefix: string; schedules: readonly ScheduleRow[]; now: Date },
): Promise<void> {
  if (input.schedules.length === 0) return;
  const rows = JSON.stringify(
    input.schedules.map((s) => ({ id: s.id, name: s.name, data: s.data, every_ms: s.everyMs })),
  );
  await executor.execute(sql`
    INSERT INTO sync_schedules (queue_prefix, scheduler_id, job_name, job_data, every_ms, updated_at)
    SELECT ${input.prefix}::text, r.id, r.name, r.data, r.every_ms, ${input.now.toISOString()}::timestamptz
    FROM jsonb_to_recordset(${rows}::jsonb) AS r(id text, name text, data jsonb, every_ms bigint)
    ORDER BY r.id
    ON CONFLICT (queue_prefix, scheduler_id) DO UPDATE SET
      job_name = excluded.job_name, job_data = excluded.job_data, every_ms = excluded.every_ms,
      updated_at = excluded.updated_at`);
}

/** The wanted schedules of a queue prefix, by id. */
export async function loadSchedules(executor: Executor, prefix: string): Promise<ScheduleRow[]> {
  const rows = await queryRows<{ id: string; name: string; data: string; every_ms: string }>(
    executor,
    sql`SELECT scheduler_id AS id, job_name AS name, job_data::text AS data, every_ms::text AS every_ms
        FROM sync_schedules WHERE queue_prefix = ${prefix} ORDER BY scheduler_id`,
  );
  return rows.map((r) => ({ id: r.id, name: r.name, data: JSON.parse(r.data), everyMs: Number(r.every_ms) }));
}
