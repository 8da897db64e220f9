import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compareBalances, formatBalances } from '../../src/verify/balance-check.js';

describe('compareBalances', () => {
  it('treats zero as absent, ignores leading zeros, and lists each differing token', () => {
    const stored = new Map([
      ['eth', '0100'],
      ['usdc', '5'],
      ['ar', '0'],
    ]);
    const service = [
      { tag: 'eth', amount: '100' },
      { tag: 'usdc', amount: '6' },
      { tag: 'dai', amount: '7' },
      { tag: 'ar', amount: '0' },
    ];
    const { compared, differences } = compareBalances('0xabc', stored, service);
    assert.equal(compared, 3);
    assert.deepEqual(differences, [
      { account: '0xabc', tag: 'dai', stored: '0', service: '7' },
      { account: '0xabc', tag: 'usdc', stored: '5', service: '6' },
    ]);
  });

  it('keeps exact values beyond 2^53 and negative stored balances', () => {
    const big = '1'.repeat(78);
    const { differences } = compareBalances('a', new Map([['t', `-${big}`]]), [{ tag: 't', amount: big }]);
    assert.deepEqual(differences, [{ account: 'a', tag: 't', stored: `-${big}`, service: big }]);
  });

  it('says all equal, or names the differences', () => {
    assert.deepEqual(formatBalances({ accounts: 2, balances: 3, differences: [] }), [
      'balances: 2 account(s), 3 token balance(s) compared with the service: all equal',
    ]);
    const lines = formatBalances({
      accounts: 1,
      balances: 1,
      differences: [{ account: 'a', tag: 't', stored: '1', service: '2' }],
    });
    assert.deepEqual(lines, [
      'balances: 1 account(s), 1 token balance(s) compared with the service: 1 differ',
      '  a t: stored 1, service 2',
    ]);
  });
});
