/**
 * The record parser, the encoder and the hash check against plain reference versions of what
 * they compute (arrays joined into the signed message, regular expressions over every value,
 * `toISOString`), over many generated records: the fast paths must give the same records, rows,
 * items, outcomes and reasons.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseTxKeyPage } from '../../src/client/page.js';
import {
  describe as describeValue,
  isNonNegativeSafeInteger,
  isObject,
  tryParseTxRecord,
} from '../../src/client/record.js';
import { encodeTransaction, hasUnstorableText, isoTime } from '../../src/db/write/encode.js';
import {
  checkIntegrity,
  personalMessageDigest,
  SIGNED_FIELDS,
  signedMessage,
} from '../../src/domain/integrity.js';
import { keccak256 } from '../../src/domain/keccak.js';
import type { InternalStatus, LedgerExpress, LedgerTx, RejectedRecord } from '../../src/domain/model.js';
import { isScreened, screensClean } from '../../src/domain/screened-text.js';
import { InvalidRecordError } from '../../src/errors.js';
import { type Rng, withSeed } from '../helpers/seed.js';

// ---- Reference versions -------------------------------------------------------------------------

const DIGITS = /^\d+$/;
const BARE_WORD = /^[A-Za-z_][\w-]*$/;
const UNSTORABLE = /\u0000|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
const REQUIRED = [
  'id',
  'tokenSymbol',
  'action',
  'from',
  'to',
  'feeRecipient',
  'tokenID',
  'chainType',
  'chainID',
  'data',
  'sig',
  'status',
] as const;

function clip(text: string): string {
  return text.length > 80 ? `${text.slice(0, 80)}…` : text;
}

type Checked = { value: string; problem?: undefined } | { value?: undefined; problem: string };

function referenceRecord(value: unknown): LedgerTx | string {
  if (!isObject(value)) return `record is ${describeValue(value)}, not an object`;
  const rawId = value['rawId'];
  if (rawId === undefined || rawId === null) return 'rawId is missing';
  if (!isNonNegativeSafeInteger(rawId))
    return `rawId must be a non-negative safe integer (got ${describeValue(rawId)})`;
  const ledgerHash = value['ledgerHash'];
  if (typeof ledgerHash !== 'string' || ledgerHash === '')
    return `ledgerHash must be a non-empty string (got ${describeValue(ledgerHash)})`;
  const strings: Record<string, string> = {};
  for (const key of REQUIRED) {
    const field = value[key];
    if (typeof field !== 'string') return `${key} must be a string (got ${describeValue(field)})`;
    strings[key] = field;
  }
  const digits = (key: string): Checked => {
    const field = value[key];
    if (typeof field !== 'string')
      return { problem: `${key} must be a decimal digit string (got ${describeValue(field)})` };
    if (!DIGITS.test(field)) return { problem: `${key} must be decimal digits (got '${clip(field)}')` };
    return { value: field };
  };
  const amount = digits('amount');
  if (amount.problem !== undefined) return amount.problem;
  const fee = digits('fee');
  if (fee.problem !== undefined) return fee.problem;
  const nonce = referenceNonce(value['nonce']);
  if (nonce.problem !== undefined) return nonce.problem;
  const timestamp = value['timestamp'];
  if (!isNonNegativeSafeInteger(timestamp))
    return `timestamp must be a non-negative safe integer (got ${describeValue(timestamp)})`;
  const optional = (key: string): Checked => {
    const field = value[key];
    if (field === undefined || field === null) return { value: '' };
    if (typeof field !== 'string')
      return { problem: `${key} must be a string (got ${describeValue(field)})` };
    return { value: field };
  };
  const version = optional('version');
  if (version.problem !== undefined) return version.problem;
  const target = optional('targetChainTxHash');
  if (target.problem !== undefined) return target.problem;
  const internal = referenceInternal(value['internalStatus']);
  if (typeof internal === 'string') return internal;
  const express = referenceExpress(value['express']);
  if (typeof express === 'string') return express;
  return {
    rawId,
    id: strings['id']!,
    tokenSymbol: strings['tokenSymbol']!,
    action: strings['action']!,
    from: strings['from']!,
    to: strings['to']!,
    amount: amount.value,
    fee: fee.value,
    feeRecipient: strings['feeRecipient']!,
    nonce: nonce.value,
    tokenID: strings['tokenID']!,
    chainType: strings['chainType']!,
    chainID: strings['chainID']!,
    data: strings['data']!,
    version: version.value,
    sig: strings['sig']!,
    ledgerHash,
    status: strings['status']!,
    internalStatus: internal.raw,
    internalStatusParsed: internal.parsed,
    timestamp,
    targetChainTxHash: target.value,
    express,
  };
}

function referenceNonce(field: unknown): Checked {
  if (typeof field === 'number') {
    if (!isNonNegativeSafeInteger(field))
      return { problem: `nonce must be a non-negative safe integer (got ${describeValue(field)})` };
    return { value: String(field) };
  }
  if (typeof field === 'string' && DIGITS.test(field)) {
    if (BigInt(field) > 9_223_372_036_854_775_807n)
      return { problem: `nonce is out of the 64-bit range (got '${clip(field)}')` };
    return { value: field.replace(/^0+(?=\d)/, '') };
  }
  return { problem: `nonce must be a non-negative integer or digit string (got ${describeValue(field)})` };
}

function referenceInternal(field: unknown): { raw: string; parsed: InternalStatus | null } | string {
  if (field === undefined || field === null) return { raw: '', parsed: null };
  if (isObject(field)) {
    if (typeof field['status'] !== 'string') return 'internalStatus object has no string status';
    return { raw: JSON.stringify(field), parsed: { status: field['status'], json: field } };
  }
  if (typeof field !== 'string') return `internalStatus must be a string (got ${describeValue(field)})`;
  const text = field.trim();
  if (text === '') return { raw: field, parsed: null };
  if (BARE_WORD.test(text)) return { raw: field, parsed: { status: text, json: { status: text } } };
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return `internalStatus is neither JSON nor a bare word (got '${clip(field)}')`;
  }
  if (typeof parsed === 'string' && BARE_WORD.test(parsed))
    return { raw: field, parsed: { status: parsed, json: { status: parsed } } };
  if (!isObject(parsed)) return `internalStatus JSON is not an object (got '${clip(field)}')`;
  if (typeof parsed['status'] !== 'string')
    return `internalStatus JSON has no string status (got '${clip(field)}')`;
  return { raw: field, parsed: { status: parsed['status'], json: parsed } };
}

function referenceExpress(field: unknown): LedgerExpress | string {
  const express: LedgerExpress = { chainTxHash: '', withdrawFee: '', refundLedgerHash: '', err: '' };
  if (field === undefined || field === null) return express;
  if (!isObject(field)) return `express must be an object (got ${describeValue(field)})`;
  for (const key of ['chainTxHash', 'withdrawFee', 'refundLedgerHash', 'err'] as const) {
    const value = field[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') return `express.${key} must be a string (got ${describeValue(value)})`;
    express[key] = value;
  }
  return express;
}

function referenceTryParse(
  value: unknown,
): { ok: true; tx: LedgerTx } | { ok: false; rejected: RejectedRecord } {
  const result = referenceRecord(value);
  if (typeof result !== 'string') return { ok: true, tx: result };
  const rejected: RejectedRecord = { reason: result, raw: JSON.stringify(value) ?? String(value) };
  if (isObject(value)) {
    if (isNonNegativeSafeInteger(value['rawId'])) rejected.rawId = value['rawId'];
    if (typeof value['ledgerHash'] === 'string' && value['ledgerHash'] !== '')
      rejected.ledgerHash = value['ledgerHash'];
  }
  return { ok: false, rejected };
}

function referenceSignedMessage(tx: Record<string, unknown>): string | undefined {
  const lines: string[] = [];
  for (const field of SIGNED_FIELDS) {
    let value = tx[field];
    if (field === 'version' && (value === undefined || value === null || value === '')) value = 'v1';
    if (value === undefined || value === null) return undefined;
    lines.push(`${field}:${value}`);
  }
  return lines.join('\n');
}

function referenceDigest(message: string): Uint8Array {
  const bytes = Buffer.from(message, 'utf8');
  return keccak256(
    Buffer.concat([Buffer.from(`\x19Ethereum Signed Message:\n${bytes.length}`, 'latin1'), bytes]),
  );
}

function referenceHashCheck(tx: Record<string, unknown>): string {
  const message = referenceSignedMessage(tx);
  if (message === undefined) return 'unknown';
  if (typeof tx['ledgerHash'] !== 'string') return 'unknown';
  const hex = `0x${Buffer.from(referenceDigest(message)).toString('hex')}`;
  return tx['ledgerHash'].toLowerCase() === hex ? 'ok' : 'mismatch';
}

function referenceUnstorable(value: unknown): boolean {
  if (typeof value === 'string') return UNSTORABLE.test(value);
  if (Array.isArray(value)) return value.some(referenceUnstorable);
  if (isObject(value))
    return Object.entries(value).some(([k, v]) => UNSTORABLE.test(k) || referenceUnstorable(v));
  return false;
}

function referenceTokenTag(tx: LedgerTx): string {
  const chains = tx.chainType
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .join(',');
  const ids = tx.tokenID
    .split(',')
    .map((part) => {
      const id = part.trim();
      return /^0x[0-9a-fA-F]{40}$/.test(id) ? id.toLowerCase() : id;
    })
    .join(',');
  return `${chains}-${tx.tokenSymbol.trim().toLowerCase()}-${ids}`;
}

// ---- Generated records --------------------------------------------------------------------------

const ODD_TEXT = [
  '\u0000',
  '\ud800',
  '\udc00',
  '\ud83d\ude00',
  'é',
  '€',
  '\\u0000',
  '\\ud800',
  '"',
  '\\',
  'x',
];

/** Stands for a field left out, in lists {@link choose} picks from. */
const ABSENT = Symbol('absent');

function choose<T>(rng: Rng, items: readonly (T | typeof ABSENT)[]): T | undefined {
  const item = rng.pick(items);
  return item === ABSENT ? undefined : item;
}

function oddText(rng: Rng): string {
  return rng.pick(ODD_TEXT);
}

function evmId(rng: Rng): string {
  const hex = rng.hex(20);
  const mixed = [...hex].map((c) => (rng.chance(0.5) ? c.toUpperCase() : c)).join('');
  return rng.pick([`0x${mixed}`, `0X${hex}`, ` 0x${hex} `, `0x${hex.slice(1)}`, `0x${hex}g`.slice(1)]);
}

function bundleData(rng: Rng): string {
  const items = Array.from({ length: rng.int(0, 3) }, () => {
    const item: Record<string, unknown> = {
      tag: `ethereum-usdc-${evmId(rng)}`,
      chainID: rng.pick(['1', '0,1']),
      from: `acc${rng.chance(0.2) ? oddText(rng) : ''}`,
      to: 'to',
      amount: choose(rng, ['5', '007', '0', '1e3', 5, ABSENT]),
    };
    if (rng.chance(0.1)) item['chainId'] = '56';
    return rng.chance(0.05) ? 'not an item' : item;
  });
  const bundle = { items, expiration: 1, sigs: {} };
  const inner = rng.chance(0.2) ? JSON.stringify(bundle) : bundle;
  return rng.pick([JSON.stringify({ bundle: inner }), '{not json', '', '{"bundle":5}']);
}

function wireRecord(rng: Rng, rawId: number): Record<string, unknown> {
  const record: Record<string, unknown> = {
    rawId,
    id: 'batch',
    tokenSymbol: rng.pick(['USDC', ' Ar ', 'eth']),
    action: rng.pick(['transfer', 'bundle', 'burn', 'mint']),
    from: rng.chance(0.5) ? evmId(rng) : 'arweave-id',
    to: 'to-id',
    amount: rng.pick(['1000', '0001', '0', '00', '']),
    fee: rng.pick(['10', '0']),
    feeRecipient: 'fee',
    nonce: rng.pick([1700000000000, '0001700', '0', '9223372036854775807', '00000000000000000000012']),
    tokenID: rng.pick([evmId(rng), `AR,${evmId(rng)}`, ` ${evmId(rng)} , AbC`, 'Case-Sensitive']),
    chainType: rng.pick(['ethereum', 'Arweave, Ethereum', 'BSC']),
    chainID: '1',
    data: '',
    version: choose(rng, ['v1', 'v2', '', ABSENT, null]),
    sig: '0xsig',
    ledgerHash: '0xhash',
    status: rng.pick(['packaged', 'pending']),
    internalStatus: choose(rng, [
      '{"status":"success"}',
      'success',
      ' failed ',
      '"success"',
      '',
      '{"status":"ok","detail":"x"}',
      ABSENT,
      { status: 'ok' },
    ]),
    timestamp: rng.pick([0, 1_700_000_000_000, 1_767_059_541_800, 86_399_999]),
    targetChainTxHash: choose(rng, ['', '0xtarget', ABSENT]),
    express: choose(rng, [ABSENT, null, { chainTxHash: 'c', err: '' }]),
  };
  if (record['action'] === 'bundle' || rng.chance(0.1)) record['data'] = bundleData(rng);
  // Break things: a wrong type or value, or odd text somewhere.
  for (let n = rng.int(0, 2); n > 0; n--) {
    const key = rng.pick(Object.keys(record));
    const current = record[key];
    if (typeof current === 'string' && rng.chance(0.7)) {
      const at = rng.int(0, current.length);
      record[key] = current.slice(0, at) + oddText(rng) + current.slice(at);
    } else {
      record[key] = choose(rng, [
        null,
        ABSENT,
        5,
        -1,
        1.5,
        'text',
        '',
        {},
        [],
        2 ** 53,
        '18446744073709551616',
      ]);
    }
  }
  if (rng.chance(0.1)) {
    record['internalStatus'] = rng.pick([
      `{"status":"a${oddText(rng)}"}`,
      '{"status":"a\\u0000"}',
      '{"status":""}',
      '{"status":"}',
      '{"status":"a\tb"}',
      '{"status":"é b"}',
      ' {"status":"x"} ',
      '{"status":"x","more":1}',
      '{"status":5}',
      '[1]',
      '{broken',
      { status: 5 },
    ]);
  }
  return record;
}

/** A valid wire record with no odd text. */
function wireRecordOf(): Record<string, unknown> {
  return {
    rawId: 1,
    id: 'batch',
    tokenSymbol: 'USDC',
    action: 'transfer',
    from: 'a',
    to: 'b',
    amount: '1',
    fee: '0',
    feeRecipient: 'f',
    nonce: 1,
    tokenID: 'id',
    chainType: 'ethereum',
    chainID: '1',
    data: '',
    version: 'v1',
    sig: 's',
    ledgerHash: '0xh',
    status: 'packaged',
    internalStatus: '{"status":"success"}',
    timestamp: 1,
  };
}

function rowOutcome(tx: LedgerTx): unknown {
  try {
    return encodeTransaction(tx, { now: new Date(1_767_100_000_000), burnWindowMs: 86_400_000 });
  } catch (error) {
    if (error instanceof InvalidRecordError) return { reason: error.reason, raw: error.raw };
    throw error;
  }
}

// ---- Tests --------------------------------------------------------------------------------------

describe('parsing and encoding against their reference versions', () => {
  it('parses, screens and encodes generated answers exactly as the reference does', async () => {
    await withSeed((rng) => {
      let screenedRecords = 0;
      let unscreenedRecords = 0;
      for (let page = 0; page < 300; page++) {
        const records = Array.from({ length: rng.int(1, 8) }, (_, i) => wireRecord(rng, page * 10 + i + 1));
        let body = JSON.stringify({ txs: records, hasNextPage: false });
        // The same text with raw characters, or with a backslash spelled as an escape.
        if (rng.chance(0.2)) body = body.replaceAll('\\\\', '\\u005c');
        if (rng.chance(0.2)) body = body.replaceAll('\\u00e9', 'é');
        const answer = parseTxKeyPage(body, 'http://ledger/txs');
        const wire = JSON.parse(body) as { txs: unknown[] };
        const expected = wire.txs.map(referenceTryParse);
        assert.deepEqual(wire.txs.map(tryParseTxRecord), expected);
        assert.deepEqual(
          answer.txs,
          expected.flatMap((r) => (r.ok ? [r.tx] : [])),
        );
        assert.deepEqual(
          answer.rejected,
          expected.flatMap((r, index) => (r.ok ? [] : [{ ...r.rejected, index }])),
        );
        for (const tx of answer.txs) {
          const screened = isScreened(tx);
          assert.equal(screened, screensClean(body));
          if (screened) screenedRecords++;
          else unscreenedRecords++;
          // A copy is not marked: whatever changed in it is checked in full.
          assert.equal(isScreened({ ...tx }), false);
          // A screened record encodes as the same record unscreened (a copy) does.
          const outcome = rowOutcome(tx);
          assert.deepEqual(outcome, rowOutcome({ ...tx }));
          const unstorable = Object.entries((outcome as { row?: Record<string, unknown> }).row ?? {}).some(
            ([, v]) => referenceUnstorable(v),
          );
          assert.equal(unstorable, false);
          if ('row' in (outcome as object)) {
            const { row, items } = outcome as ReturnType<typeof encodeTransaction>;
            assert.equal(row.token_tag, referenceTokenTag(tx));
            assert.equal(row.hash_check, referenceHashCheck(tx as unknown as Record<string, unknown>));
            assert.equal(row.ledger_time, tx.timestamp === 0 ? null : new Date(tx.timestamp).toISOString());
            assert.equal(row.amount, tx.amount.replace(/^0+(?=\d)/, ''));
            assert.equal(row.nonce, tx.nonce.replace(/^0+(?=\d)/, ''));
            assert.equal(items.some(referenceUnstorable), false);
          } else {
            const row = { ...tx } as Record<string, unknown>;
            const anyUnstorable = Object.values(row).some(referenceUnstorable);
            assert.equal(anyUnstorable, true, `rejected for ${JSON.stringify(outcome)}`);
          }
        }
      }
      // Both paths were taken.
      assert.ok(screenedRecords > 50 && unscreenedRecords > 50, `${screenedRecords} ${unscreenedRecords}`);
    });
  });

  it('finds a NUL or lone surrogate nested in escapes, and passes only text that spells none', () => {
    assert.equal(screensClean('{"a":"plain é € \\n \\" \\\\"}'), true);
    for (const text of ['"\\u0000"', '"\\\\u0000"', '"\\u005cu0000"', '"\\ud800"', '"\\u0041"', '"\ud800"']) {
      assert.equal(screensClean(text), false, text);
    }
  });

  it('hashes the signed message and compares the hash in any case as the reference does', async () => {
    await withSeed((rng) => {
      for (let n = 0; n < 500; n++) {
        const tx: Record<string, unknown> = {};
        for (const field of SIGNED_FIELDS) {
          tx[field] = choose(rng, [
            '',
            'v1',
            'plain',
            'é€',
            '\ud800',
            '\ud83d\ude00',
            7,
            null,
            ABSENT,
            'x'.repeat(300),
          ]);
        }
        const message = signedMessage(tx);
        assert.equal(message, referenceSignedMessage(tx));
        if (message === undefined) continue;
        const digest = personalMessageDigest(message);
        assert.deepEqual(digest, referenceDigest(message));
        const hex = Buffer.from(digest).toString('hex');
        for (const ledgerHash of [
          `0x${hex}`,
          `0X${hex.toUpperCase()}`,
          `0x${hex.slice(0, 63)}`,
          `0x${hex}0`,
          `0x${hex.slice(0, 63)}g`,
          `0x${hex.slice(0, 62)}\u0130`,
          `\u0130x${hex}`,
          hex,
          '',
        ]) {
          const record = { ...tx, ledgerHash };
          assert.equal(
            checkIntegrity(record, { signatures: false }).hash,
            referenceHashCheck(record),
            ledgerHash,
          );
        }
      }
    });
  });

  it('writes times as toISOString does', async () => {
    const edges = [
      0, 1, 999, 86_399_999, 86_400_000, 951_782_400_000, 253_402_300_799_999, 253_402_300_800_000, 8.64e15,
    ];
    for (const ms of edges) assert.equal(isoTime(ms), new Date(ms).toISOString());
    await withSeed((rng) => {
      for (let n = 0; n < 20_000; n++) {
        const ms = rng.chance(0.5) ? rng.int(0, 8.64e15) : 1_767_000_000_000 + rng.int(0, 10_000_000);
        assert.equal(isoTime(ms), new Date(ms).toISOString());
      }
    });
  });

  it('still checks a tag the known tags give a screened record', () => {
    const body = JSON.stringify({ txs: [{ ...wireRecordOf(), rawId: 1 }], hasNextPage: false });
    const [tx] = parseTxKeyPage(body, 'http://ledger/txs').txs;
    assert.ok(tx !== undefined && isScreened(tx));
    const knownTags = (derived: string): string => `${derived}\u0000`;
    assert.throws(
      () => encodeTransaction(tx, { knownTags }),
      (error) => error instanceof InvalidRecordError && error.reason.startsWith('token_tag holds a NUL'),
    );
    assert.throws(
      () => encodeTransaction({ ...tx }, { knownTags }),
      (error) => error instanceof InvalidRecordError && error.reason.startsWith('token_tag holds a NUL'),
    );
  });

  it('rejects a value holding a NUL as the per-value check does', () => {
    assert.equal(hasUnstorableText({ a: ['x', { b: '\u0000' }] }), true);
    assert.equal(hasUnstorableText({ 'k\ud800': 'x' }), true);
    assert.equal(hasUnstorableText({ k: '\ud83d\ude00' }), false);
  });
});
