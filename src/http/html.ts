/** Small helpers for server-rendered HTML: escaping, numbers and times, all pure. */

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
};

/**
 * Text safe inside an element or a quoted attribute. Every value from the database or the service
 * (stream keys hold account ids and token tags, errors hold the service's words) goes through it.
 */
export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (c) => ESCAPES[c] ?? c);
}

/** A whole number with thousands separators (`12,345`); `—` for null. */
export function formatCount(value: number | null): string {
  if (value === null) return '—';
  return Math.round(value).toLocaleString('en-US');
}

/** A rate with one decimal below 10 and none above (`0.4`, `37`). */
export function formatRate(value: number): string {
  return value < 10 ? value.toFixed(1) : Math.round(value).toLocaleString('en-US');
}

/** `2026-11-25 12:34:56 UTC`. */
export function formatTime(at: Date): string {
  return `${at.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

/** `12:34` (UTC). */
export function formatClock(at: Date): string {
  return at.toISOString().slice(11, 16);
}

/** A duration in words, `45 s`, `12 min`, `3 h 5 min`, `2 d 4 h`. */
export function formatDuration(seconds: number): string {
  const s = Math.max(Math.round(seconds), 0);
  if (s < 60) return `${s} s`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 86_400) {
    const minutes = Math.floor((s % 3600) / 60);
    return `${Math.floor(s / 3600)} h${minutes > 0 ? ` ${minutes} min` : ''}`;
  }
  const hours = Math.floor((s % 86_400) / 3600);
  return `${Math.floor(s / 86_400)} d${hours > 0 ? ` ${hours} h` : ''}`;
}

/** `3 min ago` from `now`. */
export function ago(at: Date, now: Date): string {
  return `${formatDuration((now.getTime() - at.getTime()) / 1000)} ago`;
}
