/**
 * The names of stream lease owners, built and read in one place: a runner's
 * (`<role>:<host>:<pid>:<random>`, of this process by default) and a parallel backfill's
 * (`backfill:<id>`), and a runner's name read back.
 */
import { hostname } from 'node:os';

/**
 * The lease owner of a parallel backfill on its stream. The backfill holds the stream's lease from
 * its start to its last check (range commits extend it once a third of it has passed), so a
 * one-shot `sync` or a stream walk leaves the stream alone meanwhile instead of walking it a
 * second time.
 */
export function backfillOwner(backfillId: string): string {
  return `backfill:${backfillId}`;
}

/** What kind of runner holds a stream lease; the first part of its owner name. */
export type LeaseOwnerRole = 'sync' | 'worker' | 'sink';

/**
 * A lease owner's name, `<role>:<host>:<pid>:<random>`: unique per runner (leases require it),
 * and a later `sync` on the same host can tell from it whether the holder's process still runs.
 */
export function leaseOwnerName(role: LeaseOwnerRole, host = hostname(), pid = process.pid): string {
  return `${role}:${host}:${pid}:${Math.random().toString(36).slice(2, 10)}`;
}

/** The parts of an owner name `<role>:<host>:<pid>:<random>`; `undefined` for a name of another form. */
export function parseLeaseOwner(owner: string): { role: string; host: string; pid: number } | undefined {
  const [role, host, pid] = owner.split(':');
  if (!role || !host || !pid || !/^\d+$/.test(pid)) return undefined;
  return { role, host, pid: Number(pid) };
}
