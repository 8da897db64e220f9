/**
 * Rows in the text format of PostgreSQL's `COPY … FROM STDIN`, one line a row: values apart by
 * tabs, NULL as the control character RS alone (see {@link copyOptions}: the usual `\N` would
 * put a backslash in most lines). A line whose values hold no tab and none of them is RS alone,
 * and that holds no backslash, newline or carriage return, the usual case, needs no escaping:
 * one search for a tab a value and one test a line, instead of a pattern a value. Pure.
 */

const DELIMITER = '\t';
const NULL = '\x1e';
/** The characters a line holds only where a value holds them. */
const SPECIAL = /[\\\n\r]/;
/** The characters a value cannot hold as they are. */
const SPECIALS = /[\\\n\r\t]/g;
const ESCAPES: Readonly<Record<string, string>> = { '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t' };
/** RS alone as a value: a backslash before a character other than a letter or digit stands for it. */
const ESCAPED_NULL_MARK = '\\\x1e';

/** The options of the `COPY … FROM STDIN` that reads {@link copyText}'s lines. */
export const copyOptions = "(FORMAT text, NULL E'\\x1e')";

/** The columns of a COPY: their names, and which hold JSON (jsonb). */
export interface CopyColumns {
  names: readonly string[];
  json: readonly boolean[];
}

/**
 * A value's text before escaping, or null for NULL: a jsonb column's value as its JSON, a string
 * as it is, a number as JavaScript and JSON spell it (NaN and the infinities, which JSON lacks,
 * as NULL), a boolean as `true`/`false`, any other object as its JSON. The text the record
 * write's jsonb rows give PostgreSQL (`record-write-sql.ts`), for the integers and decimal
 * strings the rows hold.
 */
function valueText(value: unknown, json: boolean): string | null {
  if (value === null || value === undefined) return null;
  if (json) return JSON.stringify(value);
  switch (typeof value) {
    case 'string':
      return value;
    case 'number':
      return Number.isFinite(value) ? String(value) : null;
    case 'bigint':
    case 'boolean':
      return String(value);
    default:
      return JSON.stringify(value);
  }
}

/**
 * Rows as COPY text in UTF-8, each line ended; `valueAt(row, i)` is a row's value of column `i`.
 * Read with {@link copyOptions}.
 */
export function copyText<Row>(
  rows: readonly Row[],
  columns: CopyColumns,
  valueAt: (row: Row, column: number) => unknown,
): Buffer {
  const { json } = columns;
  const width = columns.names.length;
  const lines: string[] = new Array(rows.length);
  // One array for every row's texts, joined once a row: no string built value by value.
  const texts: string[] = new Array(width);
  for (let r = 0; r < rows.length; r++) {
    const row = rows[r] as Row;
    let plain = true;
    for (let i = 0; i < width; i++) {
      const text = valueText(valueAt(row, i), json[i] === true);
      if (text === null) texts[i] = NULL;
      else {
        if (text === NULL || text.indexOf(DELIMITER) !== -1) plain = false;
        texts[i] = text;
      }
    }
    const line = texts.join(DELIMITER);
    lines[r] = plain && !SPECIAL.test(line) ? line : escapedLine(row, columns, valueAt);
  }
  return utf8Lines(lines);
}

/**
 * Lines encoded one by one into a buffer of their exact size, each followed by a newline. Joining
 * them into one string and encoding that costs ten times as much (docs/performance.md).
 */
function utf8Lines(lines: readonly string[]): Buffer {
  let size = lines.length;
  for (const line of lines) size += Buffer.byteLength(line, 'utf8');
  const bytes = Buffer.allocUnsafe(size);
  let at = 0;
  for (const line of lines) {
    at += bytes.write(line, at, 'utf8');
    bytes[at++] = 0x0a;
  }
  return bytes;
}

/** A row's line with each value escaped: for the rare row whose values hold special characters. */
function escapedLine<Row>(
  row: Row,
  columns: CopyColumns,
  valueAt: (row: Row, column: number) => unknown,
): string {
  return columns.names.map((_, i) => copyValue(valueAt(row, i), columns.json[i] === true)).join(DELIMITER);
}

/** One value as a field of a line read with {@link copyOptions}: escaped, NULL as RS alone. */
export function copyValue(value: unknown, json = false): string {
  const text = valueText(value, json);
  if (text === null) return NULL;
  return text === NULL ? ESCAPED_NULL_MARK : text.replace(SPECIALS, (c) => ESCAPES[c] ?? c);
}
