import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { LedgerTx, RejectedRecord } from '../../src/domain/model.js';
import { createRawIdScreen, RAW_ID_JUMP } from '../../src/sync/raw-id-screen.js';
import { makeLedgerTx } from '../helpers/ledger-tx.js';

const PHANTOM = 1_000_000_000_000_000;

function answer(rawIds: number[], rejected: RejectedRecord[] = []) {
  return {
    txs: rawIds.map((rawId) => makeLedgerTx({ rawId, ledgerHash: `0x${rawId.toString(16)}` })),
    rejected,
    hasNextPage: true,
  };
}

function screenWithHead(head: number | null) {
  const heads: number[] = [];
  const screen = createRawIdScreen({
    readHead: async () => {
      heads.push(head ?? -1);
      return head;
    },
  });
  return { screen, heads };
}

const ids = (txs: LedgerTx[]) => txs.map((tx) => tx.rawId);
const range = (lo: number, hi: number) => Array.from({ length: hi - lo + 1 }, (_, i) => lo + i);

describe('the rawId screen', () => {
  it('passes an answer that ascends in small steps without asking for the head', async () => {
    const { screen, heads } = screenWithHead(25_000);
    const served = answer(range(15_108, 15_207));
    const screened = await screen.screen(served, { after: 15_107, order: 'asc' });
    assert.equal(screened, served, 'the same answer, untouched');
    assert.equal(heads.length, 0);
  });

  it('sets aside a record far beyond the head, at its place and without a rawId, after one head read', async () => {
    const { screen, heads } = screenWithHead(25_000);
    const rawIds = [...range(15_108, 15_150), PHANTOM, ...range(15_151, 15_206)];
    const screened = await screen.screen(answer(rawIds), { after: 15_107, order: 'asc' });
    assert.deepEqual(ids(screened.txs), [...range(15_108, 15_206)]);
    assert.equal(screened.rejected.length, 1);
    const [phantom] = screened.rejected;
    assert.equal(phantom?.rawId, undefined, 'no rawId the walk could move on');
    assert.equal(phantom?.index, 43, 'its place in the answer');
    assert.match(
      phantom?.reason ?? '',
      /rawId 1000000000000000 lies beyond the newest record the service lists/,
    );
    assert.equal(JSON.parse(phantom?.raw ?? '{}').rawId, PHANTOM, 'its raw text kept');
    assert.equal(phantom?.ledgerHash, `0x${PHANTOM.toString(16)}`);
    assert.ok(heads.length <= 1, 'at most one head read an answer');
  });

  it('sets aside a phantom that ends the answer, so the walk goes on from the record before it', async () => {
    const { screen } = screenWithHead(25_000);
    const screened = await screen.screen(answer([...range(20_001, 20_099), PHANTOM]), {
      after: 20_000,
      order: 'asc',
    });
    assert.equal(screened.txs.at(-1)?.rawId, 20_099);
    assert.equal(screened.rejected.length, 1);
  });

  it('takes in a far jump the service head vouches for, and a later answer above an old head once the head is there', async () => {
    let head = 25_000;
    const screen = createRawIdScreen({ readHead: async () => head });
    const jump = await screen.screen(answer([100, 24_000]), { after: 99, order: 'asc' });
    assert.deepEqual(ids(jump.txs), [100, 24_000], 'a sparse list: the head is above the jump');
    const early = await screen.screen(answer([24_001, 24_000 + 3 * RAW_ID_JUMP]), {
      after: 24_000,
      order: 'asc',
    });
    assert.deepEqual(ids(early.txs), [24_001]);
    head = 24_000 + 3 * RAW_ID_JUMP;
    const later = await screen.screen(answer([24_000 + 3 * RAW_ID_JUMP]), { after: 24_001, order: 'asc' });
    assert.deepEqual(ids(later.txs), [head], 'the head really is there now');
  });

  it('sets aside a record listed before lower ones, below the head too', async () => {
    const { screen, heads } = screenWithHead(25_000);
    const screened = await screen.screen(answer([101, 102, 5_000, 103, 104]), { after: 100, order: 'asc' });
    assert.deepEqual(ids(screened.txs), [101, 102, 103, 104]);
    assert.match(screened.rejected[0]?.reason ?? '', /rawId 5000 is out of order/);
    assert.equal(heads.length, 0);
  });

  it('judges a page newest first from its end, and a record already set aside loses an unvouched rawId', async () => {
    const { screen } = screenWithHead(1_000);
    const page = answer(
      [PHANTOM, 1_000, 999, 998],
      [{ reason: 'bad fee', raw: '{}', rawId: PHANTOM + 1, index: 4 }],
    );
    const screened = await screen.screen(page, { after: null, order: 'desc' });
    assert.deepEqual(ids(screened.txs), [1_000, 999, 998]);
    const amended = screened.rejected.find((r) => r.reason.startsWith('bad fee'));
    assert.equal(amended?.rawId, undefined);
    assert.match(amended?.reason ?? '', /bad fee; rawId 1000000000000001 lies beyond/);
  });

  it('tells a read made elsewhere whether its rawIds pass without a head read', () => {
    const { screen } = screenWithHead(25_000);
    assert.equal(screen.passes(range(1, 100), null), true);
    assert.equal(screen.passes([101, PHANTOM, 102], 100), false);
    assert.equal(screen.passes([101, 102, PHANTOM], 100), false);
    assert.equal(screen.passes([101, 5_000, 102], 100), false);
  });
});
