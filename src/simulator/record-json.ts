import { chainHashText, type TokenDef } from './catalog.js';
import { personalMessageDigest, signedMessage, toHex } from './evm.js';
import type { EvmKeyring } from './evm-keys.js';
import { createRng, hash32, type Rng, randomBytes } from './random.js';
import {
  ACTIONS,
  BUNDLE,
  BURN,
  CHAINS,
  MINT,
  type RecordExtra,
  type RecordTable,
  TRANSFER,
} from './record-table.js';
import type { GroundTruthRecord, MalformedKind } from './types.js';

/** Everything record rendering needs besides the table. */
export interface RenderContext {
  seed: number;
  table: RecordTable;
  tokens: TokenDef[];
  feeRecipient: string;
  /** Records with a rawId at or below this are "old": bare `success`, some fields missing. */
  legacyMaxRawId: number;
  /** Id of each storage batch by number (index 0 unused). */
  batchIds: string[];
  /** Keys of the EVM accounts: their records are signed. */
  keys: EvmKeyring;
}

/** The public wire record (fields in the order the service sends them). */
export type WireRecord = Omit<
  GroundTruthRecord,
  'tokenTag' | 'arrivedAtMs' | 'packagedAtMs' | 'targetLandedAtMs' | 'malformed'
>;

const CHAIN_HASH_DOMAIN = 0xc4a1;
const DETAIL_DOMAIN = 0xde7a;

/**
 * 32 pseudo-random bytes whose last four hide the rawId, so a hash can be turned back into its
 * record without a million-entry map, while still looking random to a client.
 */
function keyedHashBytes(seed: number, rawId: number, domain: number): Uint8Array {
  const bytes = randomBytes(createRng(seed, domain, rawId), 32);
  const hidden = (rawId ^ hash32(seed, domain)) >>> 0;
  new DataView(bytes.buffer).setUint32(28, hidden);
  return bytes;
}

/** The rawId a hash made by {@link keyedHashBytes} points at (the caller re-renders to confirm). */
export function rawIdFromHashBytes(seed: number, bytes: Uint8Array): number {
  const hidden = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength).getUint32(28);
  return (hidden ^ hash32(seed, CHAIN_HASH_DOMAIN)) >>> 0;
}

/** {@link keyedHashBytes} as hex, without the byte detour (the same text). */
function keyedHashHex(seed: number, rawId: number, domain: number): string {
  const hidden = (rawId ^ hash32(seed, domain)) >>> 0;
  return `0x${createRng(seed, domain, rawId).hex(28)}${hidden.toString(16).padStart(8, '0')}`;
}

/** The source-chain hash of a mint (also its `targetChainTxHash`). */
export function mintChainHashOf(seed: number, rawId: number, chain: string): string {
  if (chain !== 'arweave') return keyedHashHex(seed, rawId, CHAIN_HASH_DOMAIN);
  return chainHashText(chain, keyedHashBytes(seed, rawId, CHAIN_HASH_DOMAIN));
}

/** The storage batch id (an Arweave transaction id) of batch number `batch`. */
export function batchIdOf(seed: number, batch: number): string {
  return Buffer.from(randomBytes(createRng(seed, 0xba7c, batch), 32)).toString('base64url');
}

/** Whether (and how) the public endpoints serve this rawId malformed at the given share. */
export function malformedKindOf(seed: number, rawId: number, rate: number): MalformedKind | undefined {
  if (rate <= 0) return undefined;
  if (hash32(seed, rawId, 0xbad) / 0x100000000 >= rate) return undefined;
  const kinds: MalformedKind[] = ['bad_amount', 'missing_raw_id', 'broken_internal_status'];
  return kinds[hash32(seed, rawId, 0xbad2) % 3];
}

/** Whether the public endpoints serve this rawId tampered at the given share (chosen like malformed ones). */
export function isTamperedAt(seed: number, rawId: number, rate: number): boolean {
  return rate > 0 && hash32(seed, rawId, 0x7a3e) / 0x100000000 < rate;
}

/** The record with a field changed after signing: `amount` one unit more; `ledgerHash` and `sig` are the original's. */
export function tamperedRecord(record: WireRecord): WireRecord {
  return { ...record, amount: (BigInt(record.amount) + 1n).toString() };
}

/** Builds the wire record at table position `pos`, as the service holds it now. */
export function renderRecord(ctx: RenderContext, pos: number): WireRecord {
  const { table, tokens, seed } = ctx;
  const rawId = table.rawId.get(pos);
  const action = table.action.get(pos);
  const token = tokens[table.token.get(pos)] ?? tokens[0]!;
  const rng = createRng(seed, DETAIL_DOMAIN, rawId);
  const packaged = table.isPackaged(pos);
  const legacy = rawId <= ctx.legacyMaxRawId;
  const posted = table.extras.get(pos)?.posted;

  const from = table.accounts[table.from.get(pos)] ?? '';
  const to = table.accounts[table.to.get(pos)] ?? '';
  const symbol = rng.chance(0.12) ? token.symbolSpellings[1]! : token.symbolSpellings[0]!;
  const tokenID = rng.chance(0.3) ? token.idSpellings[token.idSpellings.length - 1]! : token.idSpellings[0]!;
  // Signed fields draw first, so later draws that depend on the record's state cannot change them.
  const version = posted?.version ?? (rng.chance(0.15) ? '' : 'v1');
  // Senders without a key here (Arweave, `eid…`) carry signature bytes no check here reads.
  const otherSig = posted || ctx.keys.holds(from) ? undefined : `0x${rng.hex(65)}`;
  const targetChain =
    action === MINT || action === BURN
      ? (CHAINS[table.chain.get(pos)] ?? 'ethereum')
      : (token.chains[0] ?? 'ethereum');
  const fields = actionFields({ ctx, pos, rng, token, from, to, targetChain });

  const signed = {
    tokenSymbol: posted?.tokenSymbol ?? symbol,
    action: ACTIONS[action] ?? 'transfer',
    from: posted?.from ?? from,
    to: posted?.to ?? to,
    amount: table.amount[pos] ?? '0',
    fee: posted?.fee ?? fields.fee,
    feeRecipient: posted?.feeRecipient ?? ctx.feeRecipient,
    nonce: table.nonce.get(pos),
    tokenID: posted?.tokenID ?? tokenID,
    chainType: posted?.chainType ?? token.chainType,
    chainID: posted?.chainID ?? token.chainID,
    data: posted?.data ?? fields.data,
    version,
  };
  // A submitted record keeps the sender's signature and the hash taken when it was accepted.
  const digest = posted ? undefined : personalMessageDigest(signedMessage(signed));
  const record: WireRecord = {
    rawId,
    id: packaged ? (ctx.batchIds[table.batch.get(pos)] ?? batchIdOf(seed, table.batch.get(pos))) : '',
    ...signed,
    sig: posted?.sig ?? otherSig ?? (digest && ctx.keys.sign(from, digest)) ?? '',
    ledgerHash: posted?.ledgerHash ?? `0x${toHex(digest!)}`,
    status: packaged ? 'packaged' : 'confirmed',
    internalStatus: fields.internalStatus ?? (legacy ? 'success' : '{"status":"success"}'),
    timestamp: packaged ? table.timestamp.get(pos) : 0,
    targetChainTxHash: fields.targetChainTxHash,
    express: fields.express,
  };
  if (legacy) {
    if (rng.chance(0.5)) delete record.version;
    if (rng.chance(0.3)) delete record.express;
    if (rng.chance(0.3)) delete record.targetChainTxHash;
  }
  return record;
}

type ExpressFields = NonNullable<WireRecord['express']>;
type BundleExtra = NonNullable<RecordExtra['bundle']>;

/** What a record's action adds to it; `internalStatus` only where it is not a plain success. */
interface ActionFields {
  data: string;
  fee: string;
  targetChainTxHash: string;
  internalStatus: string | null;
  express: ExpressFields;
}

/** The record being rendered, as {@link actionFields} needs it. */
interface Rendering {
  ctx: RenderContext;
  pos: number;
  /** The record's detail generator: its draws must come in the same order on every render. */
  rng: Rng;
  token: TokenDef;
  from: string;
  to: string;
  targetChain: string;
}

function actionFields(at: Rendering): ActionFields {
  const { ctx, pos, rng, token, targetChain } = at;
  const { table, seed } = ctx;
  const rawId = table.rawId.get(pos);
  const action = table.action.get(pos);
  const extra = table.extras.get(pos);
  const fields: ActionFields = {
    data: '',
    fee: '0',
    targetChainTxHash: '',
    internalStatus: null,
    express: { chainTxHash: '', withdrawFee: '', refundLedgerHash: '', err: '' },
  };
  if (action === MINT) {
    fields.targetChainTxHash = mintChainHashOf(seed, rawId, targetChain);
    fields.data = JSON.stringify({
      chainType: targetChain,
      txHash: fields.targetChainTxHash,
      blockNumber: 18_000_000 + Math.floor(rawId / 7),
      from: at.to,
      value: table.amount[pos],
    });
  } else if (action === TRANSFER) {
    fields.fee = token.transferFee;
    if (extra?.express) expressFields(at, fields);
  } else if (action === BURN) {
    fields.fee = token.burnFeeMap[targetChain] ?? '0';
    fields.data = JSON.stringify({ targetChainType: targetChain });
    // Drawn whatever the state: a landing must not change the fields drawn after it (sig…).
    const landedHash = chainHashText(targetChain, randomBytes(rng, 32));
    if (table.targetLanded(pos)) fields.targetChainTxHash = landedHash;
  } else if (action === BUNDLE && extra?.bundle) {
    fields.fee = token.bundleFee;
    bundleFields(at, extra.bundle, fields);
  }
  return fields;
}

/** An express transfer: paid out on the target chain, or refunded when that failed. */
function expressFields(at: Rendering, fields: ActionFields): void {
  const { rng, token, targetChain } = at;
  const withdrawFee = (BigInt(token.burnFeeMap[targetChain] ?? '0') * 2n).toString();
  fields.data = JSON.stringify({
    appId: 'express',
    withdrawAction: 'pay',
    withdrawTo: at.from,
    withdrawChainType: targetChain,
    withdrawFee,
  });
  const failed = rng.chance(0.1);
  // Drawn whatever the state, as for burns: the fields drawn after it must not change once packaged.
  const outcomeHash = `0x${rng.hex(32)}`;
  fields.express.withdrawFee = withdrawFee;
  if (at.ctx.table.isPackaged(at.pos)) {
    if (failed) {
      fields.express.err = 'err_insufficient_liquidity';
      fields.express.refundLedgerHash = outcomeHash;
    } else {
      fields.express.chainTxHash = outcomeHash;
    }
  }
}

/** A bundle's items with their signatures, and its outcome when one item failed. */
function bundleFields(at: Rendering, bundle: BundleExtra, fields: ActionFields): void {
  const { ctx, pos, rng, token } = at;
  const { table, tokens } = ctx;
  const { items, failIndex, failMsg } = bundle;
  const sigs: Record<string, string> = {};
  const wireItems = items.map((item) => {
    const itemToken = tokens[item.token] ?? token;
    const itemFrom = table.accounts[item.from] ?? '';
    sigs[itemFrom] = `0x${rng.hex(65)}`;
    return {
      tag: itemToken.tag,
      chainID: itemToken.chainID,
      from: itemFrom,
      to: table.accounts[item.to] ?? '',
      amount: item.amount,
    };
  });
  fields.data = JSON.stringify({
    bundle: {
      items: wireItems,
      expiration: Math.floor(table.nonce.get(pos) / 1000) + 600,
      salt: uuidFrom(rng.hex(16)),
      version: 'v1',
      sigs,
    },
  });
  if (failIndex !== null)
    fields.internalStatus = JSON.stringify({ status: 'failed', index: failIndex, msg: failMsg });
}

/** The record's text as served when it is malformed in the given way. */
export function malformedText(record: WireRecord, kind: MalformedKind): string {
  const copy: Partial<WireRecord> = { ...record };
  if (kind === 'bad_amount') copy.amount = `${record.amount}.5e-3`;
  else if (kind === 'missing_raw_id') delete copy.rawId;
  else copy.internalStatus = '{"status":"succ';
  return JSON.stringify(copy);
}

function uuidFrom(hex: string): string {
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}
