/** PostgreSQL array literals of text values: how a write's columns travel, one parameter each. */

const NEEDS_ESCAPE = /[\\"]/g;

/**
 * A PostgreSQL array literal of text values (NULL for null), passed as one parameter. On the
 * write's hot path (a batch sends some forty, one per column): a column with nothing to escape,
 * the usual case, is joined in one allocation rather than concatenated value by value.
 */
export function textArray(values: ReadonlyArray<string | null>): string {
  if (values.every(isPlain)) return values.length === 0 ? '{}' : `{"${values.join('","')}"}`;
  const quoted = values.map((value) => {
    if (value === null) return 'NULL';
    return isPlain(value) ? `"${value}"` : `"${value.replace(NEEDS_ESCAPE, '\\$&')}"`;
  });
  return `{${quoted.join(',')}}`;
}

/** Whether a value goes into an array literal as it is, between quotes. */
function isPlain(value: string | null): boolean {
  return value !== null && value.indexOf('"') === -1 && value.indexOf('\\') === -1;
}
