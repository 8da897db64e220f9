/**
 * Text formatting for command output. Amounts are formatted with string/bigint math only: they
 * may be far beyond what a JavaScript number holds exactly.
 */

/**
 * An amount in the token's smallest unit as token units: `formatUnits('1234500', 6)` is
 * `'1.2345'`. Thousands are grouped with `,` in the whole part; trailing fraction zeros dropped.
 */
export function formatUnits(amount: string, decimals: number): string {
  const negative = amount.startsWith('-');
  const digits = (negative ? amount.slice(1) : amount).replace(/^0+(?=\d)/, '');
  if (!/^\d+$/.test(digits) || !Number.isInteger(decimals) || decimals < 0) {
    throw new RangeError(`cannot format '${amount}' with ${decimals} decimals`);
  }
  const padded = digits.padStart(decimals + 1, '0');
  const whole = padded.slice(0, padded.length - decimals);
  const fraction = padded.slice(padded.length - decimals).replace(/0+$/, '');
  const grouped = BigInt(whole).toLocaleString('en-US');
  return `${negative ? '-' : ''}${grouped}${fraction ? `.${fraction}` : ''}`;
}

/** A duration in seconds as `1h02m`, `3m05s` or `42s`. */
export function formatDuration(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return '?';
  const s = Math.round(seconds);
  if (s >= 3600) return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
  if (s >= 60) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${s}s`;
}

/** Rows of cells as left-aligned columns (right-aligned where `right[i]`). */
export function formatTable(rows: readonly (readonly string[])[], right: readonly boolean[] = []): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) => (right[i] ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}
