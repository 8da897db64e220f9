/**
 * Who kept the cores busy during a measured stretch, from /proc: CPU time of each group of
 * processes (the measured process, the database's backends serving it, the bench itself) and of
 * the whole machine, so a figure can say which side was the limit and how much else ran beside.
 */
import { readFileSync } from 'node:fs';
import { cpus } from 'node:os';

/** Clock ticks a second of /proc's CPU times (`getconf CLK_TCK`: 100 on Linux). */
const TICKS_PER_SECOND = 100;

/** Cores each group kept busy on average over a stretch (CPU seconds ÷ wall seconds). */
export interface CoresUsed {
  /** Per group of processes, as named by the caller. */
  groups: Record<string, number>;
  /** The whole machine (every process, the kernel included), and its number of cores. */
  machine: number;
  cores: number;
}

/** CPU seconds (user + system) a live process has used; null once it is gone (or off Linux). */
export function cpuSecondsOf(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the command name, which may hold spaces: utime and stime are 14th and 15th.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
  } catch {
    return null;
  }
}

/** Busy and total CPU seconds of the machine since boot (`/proc/stat`); null off Linux. */
function machineSeconds(): { busy: number; total: number } | null {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    const ticks = line.trim().split(/\s+/).slice(1).map(Number);
    const idle = (ticks[3] ?? 0) + (ticks[4] ?? 0);
    const total = ticks.reduce((sum, t) => sum + t, 0);
    return { busy: (total - idle) / TICKS_PER_SECOND, total: total / TICKS_PER_SECOND };
  } catch {
    return null;
  }
}

/**
 * Starts measuring: `groups` name the processes of each group (asked again at the end, so a
 * database backend that started meanwhile counts from zero; one that ended meanwhile is lost).
 * `stop()` answers the cores each group kept busy on average.
 */
export async function startCpuMeter(
  groups: Record<string, () => Promise<number[]> | number[]>,
): Promise<{ stop(): Promise<CoresUsed> }> {
  const read = async () => {
    const byGroup = new Map<string, Map<number, number>>();
    for (const [name, pids] of Object.entries(groups)) {
      const seconds = new Map<number, number>();
      for (const pid of await pids()) {
        const used = cpuSecondsOf(pid);
        if (used !== null) seconds.set(pid, used);
      }
      byGroup.set(name, seconds);
    }
    return byGroup;
  };
  const before = await read();
  const machineBefore = machineSeconds();
  const started = performance.now();
  return {
    async stop() {
      const after = await read();
      const machineAfter = machineSeconds();
      const wall = (performance.now() - started) / 1000;
      const cores = cpus().length;
      const result: CoresUsed = { groups: {}, machine: 0, cores };
      for (const [name, seconds] of after) {
        let used = 0;
        for (const [pid, end] of seconds) used += end - (before.get(name)?.get(pid) ?? 0);
        result.groups[name] = round2(used / wall);
      }
      if (machineBefore !== null && machineAfter !== null) {
        const total = machineAfter.total - machineBefore.total;
        result.machine = total > 0 ? round2(((machineAfter.busy - machineBefore.busy) / total) * cores) : 0;
      }
      return result;
    },
  };
}

const round2 = (value: number): number => Math.round(value * 100) / 100;
