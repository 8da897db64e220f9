import type { ListDialect } from '../service-query/key-query.js';
import type { ListRequestStats, SimulatorStats } from './types.js';

/** Requests served, counted by route and status, and list requests by dialect. */
export interface RequestStats {
  /** Counts a request; `dialect` when it was a list request. */
  count(route: string, status: string | number, dialect?: ListDialect): void;
  /** A copy of the counts so far. */
  snapshot(): SimulatorStats;
  /** List requests so far by dialect. */
  lists(): ListRequestStats;
  reset(): void;
}

export function createRequestStats(): RequestStats {
  let stats: SimulatorStats = {};
  let lists: ListRequestStats = { keyRequests: 0, pageRequests: 0 };
  return {
    count(route, status, dialect) {
      const byStatus = stats[route] ?? {};
      byStatus[String(status)] = (byStatus[String(status)] ?? 0) + 1;
      stats[route] = byStatus;
      if (dialect === 'key') lists.keyRequests++;
      else if (dialect === 'page') lists.pageRequests++;
    },
    snapshot: () => structuredClone(stats),
    lists: () => ({ ...lists }),
    reset() {
      stats = {};
      lists = { keyRequests: 0, pageRequests: 0 };
    },
  };
}
