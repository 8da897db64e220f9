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

/**
 * `head`, the texts comma-separated, then `tail`, as UTF-8 bytes written straight into one
 * buffer: a list's body of about 100 kB never becomes one string, which the process would
 * allocate on its heap, then encode on the socket's write.
 */
export function joinedBytes(head: string, texts: readonly string[], tail: string): Buffer {
  const lengths = texts.map((text) => Buffer.byteLength(text));
  let size = Buffer.byteLength(head) + Buffer.byteLength(tail) + Math.max(0, texts.length - 1);
  for (const length of lengths) size += length;
  const body = Buffer.allocUnsafe(size);
  let at = body.write(head, 0);
  for (let i = 0; i < texts.length; i++) {
    if (i > 0) at = body.writeUInt8(0x2c, at);
    at += body.write(texts[i]!, at, lengths[i]!);
  }
  body.write(tail, at);
  return body;
}
