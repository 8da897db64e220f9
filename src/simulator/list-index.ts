import { type Column, u32 } from './columns.js';
import { ACTIONS, type RecordTable } from './record-table.js';

/** A list's filter, resolved against the table: numbers, not text. */
export interface ListFilter {
  /** Account number, or undefined for the global list. */
  account?: number | undefined;
  /** Token number; -1 matches nothing (an unknown tag). */
  token?: number | undefined;
  /** Action code; -1 matches nothing (an unknown action). */
  action?: number | undefined;
  /** Action code to leave out; -1 leaves nothing out. */
  withoutAction?: number | undefined;
}

/** The positions of a list's records in ascending rawId order. */
export interface ListView {
  readonly length: number;
  at(index: number): number;
}

interface Filtered {
  positions: Column<Uint32Array>;
  /** How much of the base list has been looked at so far. */
  scanned: number;
}

/** Action code of a wire action name; -1 for an unknown one. */
export function actionCode(name: string): number {
  return (ACTIONS as readonly string[]).indexOf(name);
}

/**
 * Lists of record positions per filter. Each filtered list is built once, on first use, and
 * later only extended by the records that arrived since, so no request sorts or filters the
 * whole ledger.
 */
export class ListIndex {
  private readonly filtered = new Map<string, Filtered>();

  constructor(private readonly table: RecordTable) {}

  view(filter: ListFilter): ListView {
    const table = this.table;
    const column = filter.account === undefined ? undefined : table.accountRecords(filter.account);
    const base: ListView =
      filter.account === undefined
        ? { length: table.count, at: (i) => i }
        : { length: column?.length ?? 0, at: (i) => column?.get(i) ?? 0 };
    const hasFilter =
      filter.token !== undefined || filter.action !== undefined || filter.withoutAction !== undefined;
    if (!hasFilter) return base;
    const key = `${filter.account ?? ''}|${filter.token ?? ''}|${filter.action ?? ''}|${filter.withoutAction ?? ''}`;
    let entry = this.filtered.get(key);
    if (!entry) {
      entry = { positions: u32(64), scanned: 0 };
      this.filtered.set(key, entry);
    }
    const at = base.at;
    const { token, action, withoutAction } = filter;
    for (let i = entry.scanned; i < base.length; i++) {
      const pos = at(i);
      if (token !== undefined && table.token.get(pos) !== token) continue;
      if (action !== undefined && table.action.get(pos) !== action) continue;
      if (withoutAction !== undefined && table.action.get(pos) === withoutAction) continue;
      entry.positions.push(pos);
    }
    entry.scanned = base.length;
    const positions = entry.positions;
    return { length: positions.length, at: (i) => positions.get(i) };
  }

  /** Number of filtered lists built so far. */
  size(): number {
    return this.filtered.size;
  }
}
