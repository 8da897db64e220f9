/**
 * Table positions by `ledgerHash`. A real hash says nothing about its record, so the simulator
 * notes each hash as it renders the record. Two typed arrays (open addressing on the hash's
 * first 32 bits) hold a million entries in 16 MB where a map of strings would take ten times
 * that; the caller confirms a candidate by rendering it.
 */
export class LedgerHashIndex {
  private keys = new Uint32Array(1024);
  /** Position + 1 of each slot's record; 0 = empty. */
  private slots = new Uint32Array(1024);
  private size = 0;

  /** Notes that the record at `pos` has `hash` (`0x` and 64 hex digits). Noting it twice is harmless. */
  add(hash: string, pos: number): void {
    const key = keyOf(hash);
    if (key === undefined) return;
    const mask = this.slots.length - 1;
    let i = key & mask;
    for (; this.slots[i] !== 0; i = (i + 1) & mask) {
      if (this.slots[i] === pos + 1 && this.keys[i] === key) return;
    }
    this.keys[i] = key;
    this.slots[i] = pos + 1;
    this.size++;
    if (this.size * 2 > this.slots.length) this.grow();
  }

  /** Positions noted with a hash that starts like `hash` (any case): the record is among them when noted. */
  candidates(hash: string): number[] {
    const key = keyOf(hash);
    const found: number[] = [];
    if (key === undefined) return found;
    const mask = this.slots.length - 1;
    for (let i = key & mask; this.slots[i] !== 0; i = (i + 1) & mask) {
      if (this.keys[i] === key) found.push(this.slots[i]! - 1);
    }
    return found;
  }

  private grow(): void {
    const { keys, slots } = this;
    this.keys = new Uint32Array(slots.length * 2);
    this.slots = new Uint32Array(slots.length * 2);
    this.size = 0;
    for (let i = 0; i < slots.length; i++) {
      if (slots[i] !== 0) this.place(keys[i]!, slots[i]!);
    }
  }

  private place(key: number, slot: number): void {
    const mask = this.slots.length - 1;
    let i = key & mask;
    while (this.slots[i] !== 0) i = (i + 1) & mask;
    this.keys[i] = key;
    this.slots[i] = slot;
    this.size++;
  }
}

function keyOf(hash: string): number | undefined {
  if (!/^0x[0-9a-fA-F]{64}$/.test(hash)) return undefined;
  return Number.parseInt(hash.slice(2, 10), 16) >>> 0;
}
