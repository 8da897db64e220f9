/**
 * The thread of `copy-encoder.ts`: parses each answer it is sent, encodes the records of its
 * window for a COPY (`encodeForCopy`), and sends back the encoding with what the walk needs of
 * the answer. Its own copy of the fast keccak is loaded first.
 */
import { parentPort } from 'node:worker_threads';
import { parseTxKeyPage } from '../../client/page.js';
import { encodeForCopy, inWindow } from '../../db/write/copy-encoding.js';
import { loadFastKeccak } from '../../domain/keccak.js';
import type { TxKeyPage } from '../../domain/model.js';
import type { CopyEncodeReply, CopyEncodeRequest, CopyEncoderMessage } from './copy-encoder.js';

const port = parentPort;
if (port === null) throw new Error('copy-encoder-thread runs as a worker thread only');
const ready = loadFastKeccak();
// Told once it can read: until then the walks read their answers themselves.
void ready.then(() => port.postMessage({ ready: true } satisfies CopyEncoderMessage));
port.on('message', (request: CopyEncodeRequest) => {
  void ready.then(() => {
    let reply: CopyEncodeReply;
    try {
      reply = read(request);
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
function read(request: CopyEncodeRequest): CopyEncodeReply {
  let answer: TxKeyPage;
  try {
    answer = parseTxKeyPage(request.text, 'answer');
  } catch {
    // Not a key answer: the walk reads it again itself, and reports what is wrong with it.
    return { id: request.id, encoding: null };
  }
  const { txs, rejected, hasNextPage } = answer;
  const { window } = request;
  const kept = txs.filter((tx) => inWindow(tx.rawId, window));
  return {
    id: request.id,
    encoding: rejected.length > 0 || window.encode === false ? null : encodeForCopy(kept, request.options),
    read: {
      hasNextPage,
      rawIds: txs.map((tx) => tx.rawId),
      timestamps: txs.map((tx) => tx.timestamp),
      rejected: rejected.length,
    },
  };
}
