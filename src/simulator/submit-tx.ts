import { accountKey, isEvmAccount, tokenTag } from './catalog.js';
import { personalMessageHash, SIGNED_FIELDS, signedMessage } from './evm.js';
import type { SimulatedLedger } from './ledger.js';
import { type NewRecord, TRANSFER } from './record-table.js';

const TEXT_FIELDS = SIGNED_FIELDS.filter((f) => f !== 'nonce');

/** A refusal of `POST /tx`: HTTP status and the service's error code. */
export interface SubmitRefusal {
  status: number;
  error: string;
}

const refuse = (error: string, status = 400): SubmitRefusal => ({ status, error });

function validAccount(account: string): boolean {
  return isEvmAccount(account) || /^[A-Za-z0-9_-]{43}$/.test(account) || /^eid[0-9a-f]{40,64}$/.test(account);
}

/**
 * Checks a submitted transfer against the ledger: fields and formats, token, fee, nonce order
 * and the sender's balance. Returns the record to append, or the refusal.
 * The signature's format is checked; the signature itself is not verified.
 */
export function checkSubmission(
  ledger: SimulatedLedger,
  body: unknown,
  lastNonce: Map<string, number>,
  now: number,
): NewRecord | SubmitRefusal {
  if (!body || typeof body !== 'object' || Array.isArray(body)) return refuse('err_invalid_json');
  const tx = body as Record<string, unknown>;
  for (const field of [...TEXT_FIELDS, 'sig']) {
    if (typeof tx[field] !== 'string')
      return refuse(`err_invalid_${field === 'sig' ? 'signature' : 'params'}`);
  }
  const text = tx as Record<string, string>;
  const nonce = typeof tx.nonce === 'string' && /^\d{1,16}$/.test(tx.nonce) ? Number(tx.nonce) : tx.nonce;
  if (typeof nonce !== 'number' || !Number.isSafeInteger(nonce) || nonce <= 0)
    return refuse('err_invalid_nonce');
  if (text.action !== 'transfer') return refuse('err_invalid_action');
  if (!validAccount(text.from!) || !validAccount(text.to!)) return refuse('err_invalid_account');
  if (!/^(0|[1-9]\d{0,77})$/.test(text.amount!)) return refuse('err_invalid_amount');
  const token = ledger.tokens.findIndex(
    (t) =>
      t.tag === tokenTag(text.chainType!, text.tokenSymbol!, text.tokenID!) && t.chainID === text.chainID,
  );
  const def = ledger.tokens[token];
  if (!def) return refuse('err_token_not_found');
  if (text.fee !== def.transferFee) return refuse('err_invalid_fee');
  if (accountKey(text.feeRecipient!) !== accountKey(ledger.wellKnown.feeRecipient)) {
    return refuse('err_invalid_fee_recipient');
  }
  if (text.data !== '') {
    try {
      JSON.parse(text.data!);
    } catch {
      return refuse('err_invalid_data');
    }
  }
  const sig = text.sig!;
  if (isEvmAccount(text.from!) ? !/^0x[0-9a-fA-F]{130}$/.test(sig) : sig.length < 16) {
    return refuse('err_invalid_signature');
  }
  const fromKey = accountKey(text.from!);
  if (nonce <= (lastNonce.get(fromKey) ?? 0)) return refuse('err_nonce_too_low');
  const from = ledger.table.findAccount(text.from!);
  const spend = BigInt(text.amount!) + BigInt(def.transferFee);
  if (from === undefined || ledger.book.balance(from, token) < spend)
    return refuse('err_insufficient_balance');

  lastNonce.set(fromKey, nonce);
  const ledgerHash = personalMessageHash(signedMessage({ ...text, nonce } as never));
  return {
    action: TRANSFER,
    token,
    from,
    to: ledger.table.account(text.to!),
    amount: text.amount!,
    nonce,
    arrivedAtMs: now,
    extra: {
      posted: {
        tokenSymbol: text.tokenSymbol!,
        from: text.from!,
        to: text.to!,
        amount: text.amount!,
        fee: text.fee!,
        feeRecipient: text.feeRecipient!,
        tokenID: text.tokenID!,
        chainType: text.chainType!,
        chainID: text.chainID!,
        data: text.data!,
        version: text.version!,
        sig,
        ledgerHash,
      },
    },
  };
}

export function isRefusal(value: NewRecord | SubmitRefusal): value is SubmitRefusal {
  return 'error' in value;
}
