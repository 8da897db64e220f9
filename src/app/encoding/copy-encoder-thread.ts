/**
 * The thread of `copy-encoder.ts`: encodes each batch of records it is sent for a COPY
 * (`encodeForCopy`) and sends the encoding back; an answer sent to be read is parsed here alone,
 * and what the walk needs of it goes back with the encoding. Its own copy of the fast keccak is
 * loaded first.
 */
import { parentPort } from 'node:worker_threads';
import { parseTxKeyPage } from '../../client/page.js';
import { type CopyEncoding, encodeForCopy } from '../../db/write/copy-encoding.js';
import { loadFastKeccak } from '../../domain/keccak.js';
import type { LedgerTx, TxKeyPage } from '../../domain/model.js';
import { markScreened } from '../../domain/screened-text.js';
import type { CopyEncodeReply, CopyEncodeRequest } from './copy-encoder.js';

const port = parentPort;
if (port === null) throw new Error('copy-encoder-thread runs as a worker thread only');
const ready = loadFastKeccak();
port.on('message', (request: CopyEncodeRequest) => {
  void ready.then(() => {
    let reply: CopyEncodeReply;
    try {
      reply = 'window' in request ? read(request) : { id: request.id, encoding: encode(request) };
    } catch (error) {
      reply = {
        id: request.id,
        encoding: null,
        error: error instanceof Error ? error.message : String(error),
      };
    }
    port.postMessage(reply);
  });
});

/** Parses an answer and encodes the records of its window (`CopyEncoder.read`). */
function read(request: Extract<CopyEncodeRequest, { window: unknown }>): CopyEncodeReply {
  let answer: TxKeyPage;
  try {
    answer = parseTxKeyPage(request.text, 'answer');
  } catch {
    // Not a key answer: the walk reads it again itself, and reports what is wrong with it.
    return { id: request.id, encoding: null };
  }
  const { txs, rejected, hasNextPage } = answer;
  const { after, upTo } = request.window;
  const kept = txs.filter((tx) => (after === null || tx.rawId > after) && tx.rawId <= upTo);
  return {
    id: request.id,
    encoding: rejected.length > 0 ? null : encodeForCopy(kept, request.options),
    read: {
      hasNextPage,
      rawIds: txs.map((tx) => tx.rawId),
      timestamps: txs.map((tx) => tx.timestamp),
      rejected: rejected.length,
    },
  };
}

function encode(request: Exclude<CopyEncodeRequest, { window: unknown }>): CopyEncoding | null {
  if ('records' in request) {
    // Marks do not cross threads: the screening is sent along and marked again.
    request.records.forEach((tx, i) => {
      if (request.screened[i] === true) markScreened(tx);
    });
    return encodeForCopy(request.records, request.options);
  }
  const records = pickRecords(parseTxKeyPage(request.text, 'answer').txs, request.rawIds);
  return records === null ? null : encodeForCopy(records, request.options);
}

/** The records of the answer the main thread kept, in order; `null` when they are not all there. */
function pickRecords(txs: readonly LedgerTx[], rawIds: readonly number[]): LedgerTx[] | null {
  const picked: LedgerTx[] = [];
  for (const tx of txs) {
    if (picked.length < rawIds.length && tx.rawId === rawIds[picked.length]) picked.push(tx);
  }
  return picked.length === rawIds.length ? picked : null;
}
