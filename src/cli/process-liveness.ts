/** Whether a process of this host still runs, for judging the leases of the embedded database. */
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

/** The process's state letter from `/proc/<pid>/stat` (Linux); `undefined` where there is no such file. */
function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name, in parentheses, may itself hold spaces and parentheses.
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) || undefined;
  } catch {
    return undefined;
  }
}
