import type { SimulatorStats } from './types.js';

/** Requests served, counted by route and status. */
export interface RequestStats {
  count(route: string, status: string | number): void;
  /** A copy of the counts so far. */
  snapshot(): SimulatorStats;
  reset(): void;
}

export function createRequestStats(): RequestStats {
  let stats: SimulatorStats = {};
  return {
    count(route, status) {
      const byStatus = stats[route] ?? {};
      byStatus[String(status)] = (byStatus[String(status)] ?? 0) + 1;
      stats[route] = byStatus;
    },
    snapshot: () => structuredClone(stats),
    reset() {
      stats = {};
    },
  };
}
