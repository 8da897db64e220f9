/**
 * Workers' range jobs by key against a service that serves one answer holding a phantom record
 * (rawId 10^15): the phantom is set aside, no range proves a span it did not read, and the
 * mirror ends equal to the service.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { type Setup, setUp, syncToTruth } from '../helpers/redis.js';
import {
  ascendingAfter,
  type LyingService,
  PHANTOM_RAW_ID,
  phantomRows,
  provenTop,
  startLyingService,
  watermarkOf,
} from './lying-service.js';
import { assertMirrorsTruth } from './sync-truth.js';

describe('workers by key against a service that lies once', () => {
  let setup: Setup | undefined;
  let service: LyingService | undefined;
  after(async () => {
    await setup?.close();
    await service?.close();
  });

  it('a phantom in a range job: set aside, nothing proven unread, the mirror equal', async () => {
    service = await startLyingService('http://127.0.0.1:9');
    setup = await setUp(
      'worker-lying-service',
      { records: 3000, seed: 59, paging: 'key', packageDelayMs: 0, burnTargetDelayMs: 0 },
      { env: { LEDGER_BASE_URL: service.url, LEDGER_SETTLE_MS: '0' } },
    );
    service.retarget(setup.url);
    service.lie({ when: ascendingAfter(1_000), at: 'middle', absurdTimestamp: true });
    setup.start();
    await syncToTruth(setup, 60_000);
    assert.equal(service.told(), true, 'the lie was served');
    const { db } = setup.db.database;
    await assertMirrorsTruth(db, setup.sim);
    assert.equal(await watermarkOf(db), setup.sim.headRawId());
    const top = await provenTop(db);
    assert.ok(top !== null && top <= setup.sim.headRawId(), `proofs end at ${top}`);
    const rows = await phantomRows(db);
    assert.ok(rows.length >= 1, 'the phantom is kept in rejected_records');
    for (const row of rows) {
      assert.equal(row.raw_id, null);
      assert.match(row.reason, new RegExp(`rawId ${PHANTOM_RAW_ID}`));
    }
  });
});
