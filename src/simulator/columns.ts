/** Growable typed-array columns: a million records cost bytes each, not objects. */

type TypedArray = Float64Array | Uint32Array | Uint8Array;
type TypedArrayCtor<T extends TypedArray> = new (length: number) => T;

/**
 * A column of numbers backed by a typed array that doubles when full. Columns grow by appending;
 * an ascending one may also take a value in its sorted place ({@link Column.insertSorted}).
 */
export class Column<T extends TypedArray> {
  private data: T;
  length = 0;

  constructor(
    private readonly ctor: TypedArrayCtor<T>,
    capacity = 1024,
  ) {
    this.data = new ctor(Math.max(capacity, 16));
  }

  push(value: number): void {
    if (this.length === this.data.length) {
      const bigger = new this.ctor(this.data.length * 2);
      bigger.set(this.data);
      this.data = bigger;
    }
    this.data[this.length++] = value;
  }

  /**
   * Inserts `value` at its place in an ascending column. The entries above it move up one, so
   * this is cheap only near the end (a record made visible late sits just below the head).
   */
  insertSorted(value: number): void {
    const at = lastAtMost(this.length, (i) => this.data[i] as number, value) + 1;
    this.push(value);
    this.data.copyWithin(at + 1, at, this.length - 1);
    this.data[at] = value;
  }

  get(index: number): number {
    return this.data[index] as number;
  }

  set(index: number, value: number): void {
    this.data[index] = value;
  }

  /** Bytes held (for memory reports). */
  bytes(): number {
    return this.data.byteLength;
  }
}

export const f64 = (capacity?: number) => new Column(Float64Array, capacity);
export const u32 = (capacity?: number) => new Column(Uint32Array, capacity);
export const u8 = (capacity?: number) => new Column(Uint8Array, capacity);

/** Index of the last position in `0..length-1` whose value is <= `value` (ascending column), or -1. */
export function lastAtMost(length: number, valueAt: (i: number) => number, value: number): number {
  let lo = 0;
  let hi = length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    if (valueAt(mid) <= value) {
      found = mid;
      lo = mid + 1;
    } else {
      hi = mid - 1;
    }
  }
  return found;
}
