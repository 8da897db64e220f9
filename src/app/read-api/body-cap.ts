/**
 * The bound on a key answer's size: a page of large records (a bundle's `data` may be long) is
 * cut short, with `hasNextPage` true, as a service that caps its answers silently does; clients
 * go on from the last rawId they got. Pure.
 */

/** The most bytes of records one key answer holds (at least one record is always served). */
export const READ_MAX_BODY_BYTES = 8 * 1024 * 1024;

/**
 * `head`, the leading texts that fit in `maxBytes` comma-separated (the first always), then
 * `tail(cut)` (`cut`: some were left out), as UTF-8 bytes written straight into one buffer: a
 * list's body of about 100 kB never becomes one string, which the process would allocate on its
 * heap, then encode on the socket's write. Each text's length is counted once, for the cap and
 * the buffer both.
 */
export function listBody(
  head: string,
  texts: readonly string[],
  tail: (cut: boolean) => string,
  maxBytes = Number.POSITIVE_INFINITY,
): Buffer {
  const lengths: number[] = [];
  let bytes = 0;
  for (const text of texts) {
    const length = Buffer.byteLength(text);
    if (lengths.length > 0 && bytes + length + 1 > maxBytes) break;
    bytes += length + 1;
    lengths.push(length);
  }
  const end = tail(lengths.length < texts.length);
  const body = Buffer.allocUnsafe(Buffer.byteLength(head) + Math.max(0, bytes - 1) + Buffer.byteLength(end));
  let at = body.write(head, 0);
  for (let i = 0; i < lengths.length; i++) {
    if (i > 0) at = body.writeUInt8(0x2c, at);
    at += body.write(texts[i]!, at, lengths[i]!);
  }
  body.write(end, at);
  return body;
}
