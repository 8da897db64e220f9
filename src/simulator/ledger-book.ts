import type { TokenDef } from './catalog.js';
import { BUNDLE, BURN, MINT, type NewRecord, SET, TRANSFER } from './record-table.js';

/**
 * Balances and supplies implied by the records: a mint credits its recipient, a transfer moves
 * amount from sender to recipient, a burn takes amount from the sender, a successful bundle
 * moves its items; every fee goes from the sender to the fee recipient.
 */
export class LedgerBook {
  private readonly balances = new Map<number, bigint>();
  readonly supply: bigint[];

  constructor(
    private readonly tokens: TokenDef[],
    private readonly feeRecipient: number,
  ) {
    this.supply = tokens.map(() => 0n);
  }

  private key(account: number, token: number): number {
    return account * 8 + token;
  }

  balance(account: number, token: number): bigint {
    return this.balances.get(this.key(account, token)) ?? 0n;
  }

  private add(account: number, token: number, delta: bigint): void {
    const key = this.key(account, token);
    this.balances.set(key, (this.balances.get(key) ?? 0n) + delta);
  }

  /** The fee a record of this action pays. */
  fee(action: number, token: number, targetChain?: string): string {
    const def = this.tokens[token];
    if (!def) return '0';
    if (action === TRANSFER) return def.transferFee;
    if (action === BUNDLE) return def.bundleFee;
    if (action === BURN) return def.burnFeeMap[targetChain ?? def.chains[0] ?? ''] ?? '0';
    return '0';
  }

  /** Applies a record's movements. */
  apply(record: NewRecord): void {
    const amount = BigInt(record.amount);
    const fee = BigInt(this.fee(record.action, record.token, record.extra?.targetChain));
    if (record.action === SET) return;
    if (record.action === MINT) {
      this.add(record.to, record.token, amount);
      this.supply[record.token] = (this.supply[record.token] ?? 0n) + amount;
      return;
    }
    if (fee > 0n) {
      this.add(record.from, record.token, -fee);
      this.add(this.feeRecipient, record.token, fee);
    }
    if (record.action === TRANSFER) {
      this.add(record.from, record.token, -amount);
      this.add(record.to, record.token, amount);
    } else if (record.action === BURN) {
      this.add(record.from, record.token, -amount);
      this.supply[record.token] = (this.supply[record.token] ?? 0n) - amount;
    } else if (record.action === BUNDLE) {
      const bundle = record.extra?.bundle;
      if (bundle && bundle.failIndex === null) {
        for (const item of bundle.items) {
          this.add(item.from, item.token, -BigInt(item.amount));
          this.add(item.to, item.token, BigInt(item.amount));
        }
      }
    }
  }
}
