/**
 * The subjects of the change feed on NATS: where each event is published, and whether a stream's
 * subjects capture them all. Pure functions.
 */
import type { FeedEvent } from '../feed-event.js';

/**
 * The subject of `event`: `<prefix>.<action>.<tokenTag>.<kind>`, e.g.
 * `ledger.feed.transfer.ethereum-usdc-0xa0b8….stored`, so a consumer filters by action
 * (`ledger.feed.mint.>`), token (`ledger.feed.*.<tokenTag>.>`) or kind (`ledger.feed.*.*.changed`).
 * The action and the token tag are written as {@link subjectToken}s.
 */
export function eventSubject(prefix: string, event: FeedEvent): string {
  return `${prefix}.${subjectToken(event.action)}.${subjectToken(event.tokenTag)}.${event.kind}`;
}

/**
 * `value` as one subject token: letters, digits, `_`, `-` and `,` as they are, every other byte of
 * its UTF-8 as `%XX` (a `.` would split the token, `*` and `>` are wildcards, a space ends the
 * subject); an empty value is `%`, which no written value is. Token tags like
 * `ethereum-usdc-0xa0b8…` and the actions `mint`, `transfer`, `burn`, `bundle` come out unchanged.
 */
export function subjectToken(value: string): string {
  if (value === '') return '%';
  let token = '';
  for (const byte of new TextEncoder().encode(value)) {
    const char = String.fromCharCode(byte);
    token += /[A-Za-z0-9_,-]/.test(char) ? char : `%${byte.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return token;
}

/** The subject filter of every event under `prefix`: `<prefix>.>`. */
export function feedSubjects(prefix: string): string {
  return `${prefix}.>`;
}

/**
 * Whether a stream with subject filters `streamSubjects` stores every message published under
 * `prefix`: one of them must match all of `<prefix>.>`, e.g. `<prefix>.>` itself, `ledger.>` or `>`
 * for `ledger.feed` (a `*` in place of a prefix word too). `ledger.feed.transfer.>` is not enough.
 */
export function capturesFeed(streamSubjects: readonly string[], prefix: string): boolean {
  const wanted = prefix.split('.');
  return streamSubjects.some((filter) => {
    const tokens = filter.split('.');
    for (const [i, word] of wanted.entries()) {
      const token = tokens[i];
      if (token === '>') return true;
      if (token !== '*' && token !== word) return false;
    }
    return tokens.length === wanted.length + 1 && tokens[wanted.length] === '>';
  });
}
