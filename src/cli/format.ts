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

/**
 * `text` fit for one table cell of at most `max` characters: control characters and line breaks
 * shown as escapes (`\n`, `\u0007`), and a longer text cut in the middle with `…`, so its
 * beginning and its end (a stream key's account and its filters) both stay in view.
 */
export function shortenMiddle(text: string, max: number): string {
  const visible = text.replace(/[\p{C}\n\r\t\v\f\u2028\u2029]/gu, (c) => JSON.stringify(c).slice(1, -1));
  const chars = [...visible];
  if (chars.length <= max) return visible;
  const head = Math.ceil((max - 1) * 0.6);
  const tail = max - 1 - head;
  return `${chars.slice(0, head).join('')}…${tail > 0 ? chars.slice(-tail).join('') : ''}`;
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

/** An amount for a narrow column: its text, and whether it is in powers of ten. */
export interface CompactAmount {
  text: string;
  /** Shown as `9.01e+59`: too many whole digits for the column, or too small for two decimals. */
  scientific: boolean;
}

/**
 * An amount in the token's smallest unit as token units that fit a narrow column: grouped whole
 * part and exactly `fractionDigits` decimals (rounded half up; zero is `0`) while the whole
 * part has at most `maxWholeDigits` digits, else three significant digits in powers of ten
 * (`9.01e+59`; a nonzero amount that rounds to zero too: `1.50e-9`). Only for display: the exact
 * value is the database's.
 */
export function formatCompactUnits(
  amount: string,
  decimals: number,
  options: { maxWholeDigits?: number; fractionDigits?: number } = {},
): CompactAmount {
  const { maxWholeDigits = 15, fractionDigits = 2 } = options;
  const negative = amount.startsWith('-');
  const digits = (negative ? amount.slice(1) : amount).replace(/^0+(?=\d)/, '');
  if (!/^\d+$/.test(digits) || !Number.isInteger(decimals) || decimals < 0) {
    throw new RangeError(`cannot format '${amount}' with ${decimals} decimals`);
  }
  const sign = negative && digits !== '0' ? '-' : '';
  const wholeDigits = digits.length - decimals;
  const value = BigInt(digits);
  const scaled =
    decimals <= fractionDigits
      ? value * 10n ** BigInt(fractionDigits - decimals)
      : (value * 10n + 5n * 10n ** BigInt(decimals - fractionDigits)) /
        10n ** BigInt(decimals - fractionDigits + 1);
  if (value === 0n) return { text: '0', scientific: false };
  if (wholeDigits <= maxWholeDigits && scaled > 0n) {
    // Every nonzero amount with the same decimals, so that a column of them lines up.
    const unit = 10n ** BigInt(fractionDigits);
    const fraction = fractionDigits > 0 ? `.${(scaled % unit).toString().padStart(fractionDigits, '0')}` : '';
    return { text: `${sign}${(scaled / unit).toLocaleString('en-US')}${fraction}`, scientific: false };
  }
  return { text: sign + scientific(digits, wholeDigits - 1), scientific: true };
}

/** `digits` × 10^(exponent − its length + 1) with three significant digits, rounded half up. */
function scientific(digits: string, exponent: number): string {
  let head = BigInt(digits.slice(0, 3).padEnd(3, '0'));
  if ((digits[3] ?? '0') >= '5') head += 1n;
  let power = exponent;
  if (head === 1000n) {
    head = 100n;
    power += 1;
  }
  const text = head.toString();
  return `${text[0]}.${text.slice(1)}e${power < 0 ? '-' : '+'}${Math.abs(power)}`;
}
