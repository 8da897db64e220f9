import { readFileSync } from 'node:fs';

/**
 * Follows a process's peak resident set by sampling `VmHWM` of /proc/<pid>/status (the kernel's
 * own high-water mark, so a short sampling interval only matters for the last moments before
 * exit). `stop()` returns the largest value seen, in bytes, or null when nothing was read.
 */
export function watchPeakRss(pid: number, intervalMs = 100): { sample(): void; stop(): number | null } {
  let peak: number | null = null;
  const sample = (): void => {
    const value = readVmHwm(pid);
    if (value !== null && (peak === null || value > peak)) peak = value;
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  timer.unref();
  return {
    sample,
    stop() {
      clearInterval(timer);
      return peak;
    },
  };
}

/** `VmHWM` of a live process in bytes; null once it is gone (or off Linux). */
export function readVmHwm(pid: number): number | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /^VmHWM:\s+(\d+)\s+kB/m.exec(status);
    return match ? Number(match[1]) * 1024 : null;
  } catch {
    return null;
  }
}
