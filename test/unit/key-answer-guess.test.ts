import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { guessKeyAnswer } from '../../src/client/key-answer-guess.js';

const record = (rawId: number, extra = ''): string =>
  `{"rawId":${rawId},"id":"x","data":"{\\"rawId\\":99999}"${extra},"timestamp":1}`;

describe('guessKeyAnswer', () => {
  it('reads the last record’s rawId and hasNextPage of a compact answer', () => {
    const text = `{"txs":[${record(101)},${record(205)}],"hasNextPage":true}`;
    assert.deepEqual(guessKeyAnswer(text), { last: 205, hasNextPage: true });
    assert.deepEqual(guessKeyAnswer(`{"txs":[${record(7)}],"hasNextPage":false}\n`), {
      last: 7,
      hasNextPage: false,
    });
  });

  it('is not misled by a rawId inside a string value', () => {
    // The escaped quotes of the data string never spell the opening looked for.
    const text = `{"txs":[${record(3)}],"hasNextPage":false}`;
    assert.equal(guessKeyAnswer(text)?.last, 3);
  });

  it('guesses an answer without records', () => {
    assert.deepEqual(guessKeyAnswer('{"txs":[],"hasNextPage":false}'), { last: null, hasNextPage: false });
  });

  it('gives no guess for text in another shape', () => {
    for (const text of [
      `{"txs":[${record(1)}],"hasNextPage":true`, // cut short
      `{"hasNextPage":true,"txs":[${record(1)}]}`, // hasNextPage first
      `{ "txs": [ { "rawId": 1 } ], "hasNextPage": true }`, // spaced
      `{"txs":[{"id":"x","rawId":1}],"hasNextPage":true}`, // rawId not first
      `{"txs":[{"rawId":"1"}],"hasNextPage":true}`, // rawId a string
      `{"txs":[{"rawId":12345678901234567}],"hasNextPage":true}`, // past a safe integer
      `{"txs":null,"hasNextPage":true}`,
      '',
    ]) {
      assert.equal(guessKeyAnswer(text), null, text);
    }
  });
});
