/**
 * What verify counts of `rejected_records` per stream: a record set aside counts for every stream
 * that saw it, and a record without a readable rawId kept once per text counts once.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { countListSetAside, countUnkeyableKept } from '../../src/db/queries/list-counts.js';
import { writeRejected } from '../../src/db/write/rejected-rows.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

const GLOBAL = { key: 'txs' };
const ACCOUNT = { key: 'txsByAccount/0xabc', account: '0xabc' };

describe('rejected records counted per stream', () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(async () => {
    await db.drop();
  });

  const write = (streamKey: string, rejected: Parameters<typeof writeRejected>[1]['rejected']) =>
    writeRejected(db.database.db, { rejected, streamKey, page: 1, now: new Date() });

  it('counts a record set aside for every stream that saw it, in either order', async () => {
    const keyed = { reason: 'amount is not a decimal', raw: '{"rawId":7,"amount":"x"}', rawId: 7 };
    await write(ACCOUNT.key, [keyed]);
    await write(GLOBAL.key, [keyed]);
    assert.equal(await countListSetAside(db.database.db, { stream: ACCOUNT, atOrBelow: 10 }), 1);
    assert.equal(await countListSetAside(db.database.db, { stream: GLOBAL, atOrBelow: 10 }), 1);
    const other = { key: 'txsByAccount/0xdef', account: '0xdef' };
    assert.equal(await countListSetAside(db.database.db, { stream: other, atOrBelow: 10 }), 0);
  });

  it('counts a record without a readable rawId once, whatever versions of its text are kept', async () => {
    const confirmed = {
      reason: 'rawId is missing',
      raw: '{"ledgerHash":"0x1","status":"confirmed"}',
      ledgerHash: '0x1',
    };
    const packaged = {
      reason: 'rawId is missing',
      raw: '{"ledgerHash":"0x1","status":"packaged"}',
      ledgerHash: '0x1',
    };
    const noHash = { reason: 'rawId is missing', raw: '{"status":"confirmed"}' };
    await write(ACCOUNT.key, [confirmed, noHash]);
    await write(GLOBAL.key, [packaged]);
    assert.equal(await countUnkeyableKept(db.database.db, GLOBAL), 2);
    assert.equal(await countUnkeyableKept(db.database.db, ACCOUNT), 2);
  });
});
