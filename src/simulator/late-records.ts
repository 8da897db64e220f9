import { lastAtMost } from './columns.js';
import { hash32 } from './random.js';

/** Salt of the late choice, so it is independent of the other per-rawId choices (malformed, tampered). */
const LATE_SALT = 0x1a7e;

/** How arriving records are made late (already defaulted). */
export interface LateSettings {
  seed: number;
  /** Share of arriving records that become visible late, 0..1. */
  rate: number;
  /** How long after its arrival a late record stays invisible, ms. */
  delayMs: number;
}

/**
 * The records that arrived but are not visible yet, as a service whose writes commit out of
 * order shows them: rawId 101 appears only after 102 is listed. Which rawIds are late is a pure
 * function of the seed and the rawId. Every late record waits the same delay and they are added
 * in position order, so the hidden ones form a queue sorted by position: they become visible in
 * that order, and a list can skip them with a binary search instead of a filter.
 */
export class LateRecords {
  /** Table positions of the hidden records, ascending; the live ones are from `head` on. */
  private readonly positions: number[] = [];
  /** When each of them becomes visible (ms), parallel to `positions`. */
  private readonly dueAt: number[] = [];
  private head = 0;

  constructor(private readonly settings: LateSettings) {}

  /** Whether the record arriving with this rawId is to become visible late. */
  isLate(rawId: number): boolean {
    const { rate } = this.settings;
    return rate > 0 && hash32(this.settings.seed, rawId, LATE_SALT) / 0x100000000 < rate;
  }

  /** Hides the record just appended at `pos` (above every hidden one) until `arrivedAtMs + delayMs`. */
  hide(pos: number, arrivedAtMs: number): void {
    this.positions.push(pos);
    this.dueAt.push(arrivedAtMs + this.settings.delayMs);
  }

  /** Number of records hidden now. */
  get count(): number {
    return this.positions.length - this.head;
  }

  /**
   * Takes the records due by `now` (all of them when `all`) off the hidden set; returns their
   * positions, ascending. Stops at the first one not due, so the hidden set stays a queue even if
   * the clock stepped back.
   */
  release(now: number, all = false): number[] {
    const released: number[] = [];
    while (this.head < this.positions.length && (all || this.dueAt[this.head]! <= now)) {
      released.push(this.positions[this.head]!);
      this.head++;
    }
    if (this.head > 4096 && this.head * 2 > this.positions.length) {
      this.positions.splice(0, this.head);
      this.dueAt.splice(0, this.head);
      this.head = 0;
    }
    return released;
  }

  /** Whether the record at `pos` is hidden now. */
  isHidden(pos: number): boolean {
    if (this.count === 0 || pos < this.positions[this.head]!) return false;
    const i = lastAtMost(this.count, (j) => this.positions[this.head + j]!, pos);
    return i >= 0 && this.positions[this.head + i] === pos;
  }

  /**
   * Table position of the `index`-th visible record (0-based, ascending) when the table holds
   * positions `0..n-1`: `index` itself below the first hidden record, else `index` plus the
   * number of hidden records before it.
   */
  visiblePosition(index: number): number {
    if (this.count === 0 || index < this.positions[this.head]!) return index;
    // A hidden record's position less the hidden ones before it never decreases along the
    // queue; the last one where that is <= index tells how many hidden records come before.
    const j = lastAtMost(this.count, (k) => this.positions[this.head + k]! - k, index);
    return index + j + 1;
  }
}
