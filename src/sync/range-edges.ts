/**
 * Where two ranges of a run meet: records without a readable rawId listed there. A range's last
 * answer can read past its top (a hole in the rawIds), and lists a keyless record between its
 * last rawId and the first above the top; the range above, asked from the top, lists the same
 * record first when its hidden rawId is above the top. Neither can tell alone, so both note it at
 * the edge, and the second to note it counts it as a repeat: the run reports it once. Both store
 * it (the rows are one by fingerprint, seen twice), so nothing is lost whichever commit fails.
 */
import type { RejectedRecord } from '../domain/model.js';

/** Which side of an edge a range lies on: below it (its top), or above it (its bottom). */
export type EdgeSide = 'below' | 'above';

/** The keyless records a run's ranges set aside at their edges. */
export interface RangeEdges {
  /**
   * Notes the raw texts a range set aside at `edge` from `side`, and returns those the range on
   * the other side set aside there already.
   */
  meet(edge: number, side: EdgeSide, raws: readonly string[]): Promise<string[]>;
}

/** A run's {@link RangeEdges}, kept in memory (`sync`'s lanes, and the walk after them). */
export function rangeEdges(): RangeEdges {
  const noted = new Map<string, EdgeSide>();
  return {
    async meet(edge, side, raws) {
      const across: string[] = [];
      for (const raw of raws) {
        const key = `${edge}\n${raw}`;
        const seen = noted.get(key);
        if (seen === undefined) noted.set(key, side);
        else if (seen !== side) across.push(raw);
      }
      return across;
    },
  };
}

/**
 * Follows one range's keyless records at its two edges, answer after answer: those it set aside
 * before its first record with a rawId (its bottom edge, `after`), and those after its last one
 * up to its top (its top edge). Returns, as each edge is known, how many the range across had
 * set aside already.
 */
export function edgeWatch(edges: RangeEdges | undefined, after: number | null) {
  // Null once the range's first record with a rawId is read (or when there is no edge below).
  let bottom: Set<string> | null = edges !== undefined && after !== null ? new Set() : null;
  let top = new Set<string>();
  return {
    /**
     * One answer's records set aside (`rejected`); `inRange`: the places of its first and last
     * records with a rawId in the range (`undefined` when none), asked only when it matters;
     * `end`: the range's top when it ends with this answer (`null`: not now, or an open range).
     */
    async step(
      rejected: readonly RejectedRecord[],
      inRange: () => { first: number; last: number } | undefined,
      end: number | null,
    ): Promise<number> {
      if (edges === undefined) return 0;
      const keyless = rejected.filter((r) => r.rawId === undefined && r.index !== undefined);
      // Most answers set nothing aside: nothing to place.
      if (bottom === null && top.size === 0 && keyless.length === 0) return 0;
      const places = inRange();
      const repeated = new Set<string>();
      if (bottom !== null) {
        for (const r of keyless) if (places === undefined || r.index! < places.first) bottom.add(r.raw);
        if (places !== undefined || end !== null) {
          for (const raw of await edges.meet(after!, 'above', [...bottom])) repeated.add(raw);
          bottom = null;
        }
      }
      if (places !== undefined) top = new Set();
      for (const r of keyless) if (places === undefined || r.index! > places.last) top.add(r.raw);
      if (end !== null && Number.isFinite(end))
        for (const raw of await edges.meet(end, 'below', [...top])) repeated.add(raw);
      return repeated.size;
    },
  };
}
