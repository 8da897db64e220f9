import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatLastRun, formatListReading, listReading } from '../../src/app/status/list-reading.js';

describe('the dialect a stream is read in', () => {
  const byKey = { paging: 'key' as const, keyCount: 50 };
  const byKeyWalk = { mode: 'backfill' as const, cursor: 700 };
  const byPageWalk = { mode: 'backfill' as const, nextPage: 3, headRawId: null, totalPages: 9, owner: 'o' };

  it('follows the walk in progress: by key with the count its last run by key ended with, else by page', () => {
    assert.deepEqual(listReading({ walk: byKeyWalk, lastRun: byKey, kept: 'page' }), {
      dialect: 'key',
      count: 50,
      from: 'walk',
    });
    assert.deepEqual(listReading({ walk: byKeyWalk, lastRun: null, kept: null }), {
      dialect: 'key',
      count: null,
      from: 'walk',
    });
    assert.deepEqual(listReading({ walk: byPageWalk, lastRun: byKey, kept: 'key' }), {
      dialect: 'page',
      count: null,
      from: 'walk',
    });
  });

  it('reads an idle stream as its last runs recorded, else as the service answered when asked', () => {
    assert.deepEqual(listReading({ walk: null, lastRun: byKey, kept: 'page' }), {
      dialect: 'key',
      count: 50,
      from: 'run',
    });
    assert.deepEqual(listReading({ walk: null, lastRun: { paging: 'page', keyCount: null }, kept: 'key' }), {
      dialect: 'page',
      count: null,
      from: 'run',
    });
    assert.deepEqual(listReading({ walk: null, lastRun: { paging: null, keyCount: null }, kept: 'key' }), {
      dialect: 'key',
      count: null,
      from: 'service',
    });
    assert.equal(listReading({ walk: null, lastRun: null, kept: null }), null);
  });

  it('says it in a few words', () => {
    assert.equal(formatListReading({ dialect: 'key', count: 100, from: 'run' }), 'key, count 100');
    assert.equal(formatListReading({ dialect: 'key', count: null, from: 'service' }), 'key');
    assert.equal(formatListReading({ dialect: 'page', count: null, from: 'walk' }), 'page');
    assert.equal(formatListReading(null), '-');
  });

  it('gives the pages of the last run, with its outcome unless it went well', () => {
    assert.equal(formatLastRun({ pages: 12, outcome: 'ok' }), '12 pages');
    assert.equal(formatLastRun({ pages: 1, outcome: 'ok' }), '1 page');
    assert.equal(formatLastRun({ pages: 0, outcome: 'error' }), '0 pages, error');
    assert.equal(formatLastRun(null), '-');
  });
});
