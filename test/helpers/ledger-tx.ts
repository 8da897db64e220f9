import { recomputeLedgerHash } from '../../src/domain/integrity.js';
import type { LedgerTx } from '../../src/domain/model.js';

/** A valid, packaged `transfer` record; `overrides` change any field. */
export function makeLedgerTx(overrides: Partial<LedgerTx> = {}): LedgerTx {
  const rawId = overrides.rawId ?? 1;
  return {
    rawId,
    id: 'batch-1',
    tokenSymbol: 'USDC',
    action: 'transfer',
    from: '0xAbC0000000000000000000000000000000000001',
    to: 'eid-recipient',
    amount: '1000',
    fee: '10',
    feeRecipient: '0xFee0000000000000000000000000000000000002',
    nonce: '1700000000000',
    tokenID: '0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48',
    chainType: 'ethereum',
    chainID: '1',
    data: '',
    version: 'v1',
    sig: '0xsig',
    ledgerHash: `0xhash${rawId}`,
    status: 'packaged',
    internalStatus: '{"status":"success"}',
    internalStatusParsed: { status: 'success', json: { status: 'success' } },
    timestamp: 1_700_000_000_000,
    targetChainTxHash: '',
    express: { chainTxHash: '', withdrawFee: '', refundLedgerHash: '', err: '' },
    ...overrides,
  };
}

/**
 * Like {@link makeLedgerTx}, with a nonce per rawId and the `ledgerHash` recomputed from the
 * signed fields (after `overrides`, unless they set it): a record `verify` finds intact.
 */
export function makeHashedLedgerTx(overrides: Partial<LedgerTx> = {}): LedgerTx {
  const tx = makeLedgerTx({ nonce: String(1_700_000_000_000 + (overrides.rawId ?? 1)), ...overrides });
  return { ...tx, ledgerHash: overrides.ledgerHash ?? recomputeLedgerHash(tx)! };
}
