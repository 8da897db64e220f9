/**
 * A guess, from an answer's text alone, at what a walk by key needs to ask for the next answer:
 * its last rawId and whether more follow. A walk whose answers are parsed on another thread asks
 * for the next one with the guess while this one is parsed; the parse decides, and a wrong guess
 * only costs the request made with it. Reads the compact JSON the service writes (records open
 * with `{"rawId":`, `hasNextPage` last); any other text gives no guess. Pure.
 */
import type { KeyAnswerGuess } from '../domain/model.js';

const TAIL = /"hasNextPage":(true|false)\}\s*$/;
const RECORD_OPENING = '{"rawId":';
const EMPTY = '{"txs":[],';

/**
 * The guess for a key answer's text, or `null` when its text is not in the compact shape (the
 * answer is then to be parsed before the walk goes on). A string value cannot hold the opening
 * looked for: its quotes would be escaped.
 */
export function guessKeyAnswer(text: string): KeyAnswerGuess | null {
  const tail = TAIL.exec(text.slice(-40));
  if (tail === null) return null;
  const hasNextPage = tail[1] === 'true';
  const opening = text.lastIndexOf(RECORD_OPENING);
  if (opening < 0) return text.startsWith(EMPTY) ? { last: null, hasNextPage } : null;
  let at = opening + RECORD_OPENING.length;
  let last = 0;
  const start = at;
  for (let code = text.charCodeAt(at); code >= 48 && code <= 57; code = text.charCodeAt(++at))
    last = last * 10 + (code - 48);
  if (at === start || at - start > 15) return null;
  return { last, hasNextPage };
}
