const COMMA = Buffer.from(',');

/** `prefix` + the parts joined by commas + `suffix`, as one buffer. */
export function joinJson(prefix: string, parts: Buffer[], suffix: string): Buffer {
  const pieces: Buffer[] = [Buffer.from(prefix)];
  parts.forEach((part, i) => {
    if (i > 0) pieces.push(COMMA);
    pieces.push(part);
  });
  pieces.push(Buffer.from(suffix));
  return Buffer.concat(pieces);
}
