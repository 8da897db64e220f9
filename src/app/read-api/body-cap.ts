/**
 * The bound on a key answer's size: a page of large records (a bundle's `data` may be long) is
 * cut short, with `hasNextPage` true, as a service that caps its answers silently does; clients
 * go on from the last rawId they got. Pure.
 */

/** The most bytes of records one key answer holds (at least one record is always served). */
export const READ_MAX_BODY_BYTES = 8 * 1024 * 1024;

/** The leading records whose texts fit in `maxBytes` (the first always), and whether any was left out. */
export function fitRecords(texts: readonly string[], maxBytes: number): { texts: string[]; cut: boolean } {
  let bytes = 0;
  for (let i = 0; i < texts.length; i++) {
    bytes += Buffer.byteLength(texts[i]!) + 1;
    if (bytes > maxBytes && i > 0) return { texts: texts.slice(0, i), cut: true };
  }
  return { texts: [...texts], cut: false };
}
