/** Whether a process of this host still runs: for judging the leases and the folder lock of the embedded database. */
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

/** How often {@link processEnds} looks again. */
const POLL_MS = 50;

/**
 * Whether process `pid` still runs: it exists and is not a zombie (a process that ended and
 * waits for its parent to collect it, which a parent busy elsewhere, or a container's first
 * process that never collects its orphans, leaves behind indefinitely).
 */
export function processRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  return processState(pid) !== 'Z';
}

/** Waits up to `waitMs` for process `pid` to end (a killed process takes a moment to go); true when it did. */
export async function processEnds(pid: number, waitMs: number): Promise<boolean> {
  const deadline = Date.now() + waitMs;
  while (processRunning(pid)) {
    if (Date.now() >= deadline) return false;
    await sleep(POLL_MS);
  }
  return true;
}

/**
 * Which process `pid` is, beyond its number: this boot's id and the process's start time
 * (Linux, `/proc`), so a pid the system gave to another process since is not taken for the one
 * that held it. `undefined` where `/proc` does not tell.
 */
export function processIdentity(pid: number): string | undefined {
  const fields = statFields(pid);
  const started = fields?.[19];
  if (started === undefined) return undefined;
  try {
    return `${readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()}:${started}`;
  } catch {
    return undefined;
  }
}

/** The process's state letter from `/proc/<pid>/stat` (Linux); `undefined` where there is no such file. */
function processState(pid: number): string | undefined {
  return statFields(pid)?.[0] || undefined;
}

/** The fields of `/proc/<pid>/stat` after the command name (the state first); `undefined` where there is no such file. */
function statFields(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name, in parentheses, may itself hold spaces and parentheses.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
  }
}
