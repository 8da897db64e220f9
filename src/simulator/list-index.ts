import { type Column, lastAtMost, u32 } from './columns.js';
import type { LateRecords } from './late-records.js';
import { ACTIONS, type RecordTable } from './record-table.js';

/** A list's filter, resolved against the table: numbers, not text. */
export interface ListFilter {
  /** Account number, or undefined for the global list. */
  account?: number | undefined;
  /** Token number; -1 matches nothing (an unknown tag). */
  token?: number | undefined;
  /** Token numbers, any of them (a key request's list of tags); sorted, without repeats. */
  tokens?: readonly number[] | undefined;
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
  filter: ListFilter;
  positions: Column<Uint32Array>;
  /**
   * Table position the list has been built up to (exclusive). A table position, not an index in
   * the base list: a late record made visible lands inside the base list and shifts its indexes.
   */
  scannedTo: number;
}

/** Key of the global list in the registry of filtered lists by base. */
const GLOBAL = -1;

/** Action code of a wire action name; -1 for an unknown one. */
export function actionCode(name: string): number {
  return (ACTIONS as readonly string[]).indexOf(name);
}

/**
 * Lists of record positions per filter. Each filtered list is built once, on first use, and
 * later only extended by the records that arrived since, so no request sorts or filters the
 * whole ledger. Records still hidden (visible late) are in no list: the global list skips them
 * and the others get them, in their rawId place, when {@link ListIndex.reveal} is called.
 */
export class ListIndex {
  private readonly filtered = new Map<string, Filtered>();
  /** The filtered lists by the list they filter: an account's number, or {@link GLOBAL}. */
  private readonly byBase = new Map<number, Filtered[]>();

  constructor(
    private readonly table: RecordTable,
    private readonly late: LateRecords,
  ) {}

  /** The records visible now, in rawId order: every position but the hidden ones. */
  private globalView(): ListView {
    const hidden = this.late.count;
    if (hidden === 0) return { length: this.table.count, at: (i) => i };
    return { length: this.table.count - hidden, at: (i) => this.late.visiblePosition(i) };
  }

  private baseView(account: number | undefined): ListView {
    if (account === undefined) return this.globalView();
    const column = this.table.accountRecords(account);
    return { length: column?.length ?? 0, at: (i) => column?.get(i) ?? 0 };
  }

  view(filter: ListFilter): ListView {
    const base = this.baseView(filter.account);
    const hasFilter =
      filter.token !== undefined ||
      filter.tokens !== undefined ||
      filter.action !== undefined ||
      filter.withoutAction !== undefined;
    if (!hasFilter) return base;
    const entry = this.entry(filter);
    const start = lastAtMost(base.length, base.at, entry.scannedTo - 1) + 1;
    for (let i = start; i < base.length; i++) {
      const pos = base.at(i);
      if (this.matches(entry.filter, pos)) entry.positions.push(pos);
    }
    entry.scannedTo = this.table.count;
    const positions = entry.positions;
    return { length: positions.length, at: (i) => positions.get(i) };
  }

  private entry(filter: ListFilter): Filtered {
    const tokens = filter.tokens?.join('+') ?? filter.token ?? '';
    const key = `${filter.account ?? ''}|${tokens}|${filter.action ?? ''}|${filter.withoutAction ?? ''}`;
    let entry = this.filtered.get(key);
    if (!entry) {
      entry = { filter, positions: u32(64), scannedTo: 0 };
      this.filtered.set(key, entry);
      const base = filter.account ?? GLOBAL;
      const siblings = this.byBase.get(base);
      if (siblings) siblings.push(entry);
      else this.byBase.set(base, [entry]);
    }
    return entry;
  }

  private matches(filter: ListFilter, pos: number): boolean {
    const { token, tokens, action, withoutAction } = filter;
    const table = this.table;
    if (token !== undefined && table.token.get(pos) !== token) return false;
    if (tokens !== undefined && !tokens.includes(table.token.get(pos))) return false;
    if (action !== undefined && table.action.get(pos) !== action) return false;
    if (withoutAction !== undefined && table.action.get(pos) === withoutAction) return false;
    return true;
  }

  /**
   * Puts a record that has just become visible into the filtered lists already built past it
   * (the others meet it when next extended). Only the global lists and its two accounts' lists
   * are looked at.
   */
  reveal(pos: number): void {
    const from = this.table.from.get(pos);
    const to = this.table.to.get(pos);
    const bases = from === to ? [GLOBAL, from] : [GLOBAL, from, to];
    for (const base of bases) {
      for (const entry of this.byBase.get(base) ?? []) {
        if (pos < entry.scannedTo && this.matches(entry.filter, pos)) entry.positions.insertSorted(pos);
      }
    }
  }

  /** Number of filtered lists built so far. */
  size(): number {
    return this.filtered.size;
  }
}
