/** The change feed in tests: rows written by hand, an SSE reader, the feed folded back into rows. */
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { sql } from 'drizzle-orm';
import type { Executor } from '../../src/db/rows.js';
import type { FeedEvent } from '../../src/feed/feed-event.js';

/** A record row as the tests write it: the filter keys and the tracked fields. */
export interface TestRow {
  rawId: number;
  action?: string;
  tokenTag?: string;
  from?: string;
  to?: string;
  status?: string;
}

/** Inserts rows into `ledger_transactions` in one statement (the triggers write their events). */
export async function insertRows(db: Executor, rows: readonly TestRow[]): Promise<void> {
  const json = JSON.stringify(
    rows.map((r) => ({
      raw_id: r.rawId,
      action: r.action ?? 'transfer',
      token_tag: r.tokenTag ?? 'ethereum-usdc-0xa0b8',
      from_account: r.from ?? 'alice',
      to_account: r.to ?? 'bob',
      status: r.status ?? 'confirmed',
    })),
  );
  await db.execute(sql`
    INSERT INTO ledger_transactions (raw_id, record_id, token_symbol, action, from_account, to_account, amount, fee,
      fee_recipient, nonce, token_id, chain_type, chain_id, data, version, sig, ledger_hash, status, internal_status,
      timestamp_ms, target_chain_tx_hash, express_chain_tx_hash, express_withdraw_fee, express_refund_ledger_hash,
      express_err, token_tag, first_seen_at, updated_at)
    SELECT r.raw_id, '', 'USDC', r.action, r.from_account, r.to_account, 1, 0, 'fees', 1, '0xa0b8', 'ethereum', '1', '',
      'v1', '', 'hash-' || r.raw_id, r.status, '{"status":"success"}', 0, '', '', '', '', '', r.token_tag, now(), now()
    FROM jsonb_to_recordset(${json}::jsonb) AS r(raw_id bigint, action text, token_tag text, from_account text,
      to_account text, status text)`);
}

/** A Server-Sent Events stream read as it comes: its frames, and the id last set. */
export interface SseReader {
  response: IncomingMessage;
  events: FeedEvent[];
  /** The last `id:` received (what a browser would send as `Last-Event-ID`). */
  lastId(): string | undefined;
  /** Resolves once the stream has ended (closed by the server or the reader). */
  ended: Promise<void>;
  close(): void;
}

/** Opens `url` as an SSE stream (`Last-Event-ID` when given); resolves on the answer's head. */
export function openSse(
  url: string,
  options: { lastEventId?: string; paused?: boolean } = {},
): Promise<SseReader> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { accept: 'text/event-stream' };
    if (options.lastEventId !== undefined) headers['last-event-id'] = options.lastEventId;
    const req = httpRequest(url, { headers, agent: false }, (response) => {
      const events: FeedEvent[] = [];
      let lastId: string | undefined;
      let buffer = '';
      response.setEncoding('utf8');
      if (options.paused) response.pause();
      response.on('data', (chunk: string) => {
        buffer += chunk;
        for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
          const frame = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          for (const line of frame.split('\n')) {
            if (line.startsWith('id: ')) lastId = line.slice(4);
            else if (line.startsWith('data: ')) events.push(JSON.parse(line.slice(6)) as FeedEvent);
          }
        }
      });
      const ended = new Promise<void>((done) => {
        response.once('close', done);
        response.once('error', () => done());
      });
      resolve({ response, events, lastId: () => lastId, ended, close: () => req.destroy() });
    });
    req.once('error', reject);
    req.end();
  });
}

/** A record as the feed tells it: its tracked fields now, and its (status, internal status) one change after another. */
export interface FoldedRecord {
  status: string;
  internalStatus: string;
  targetChainTxHash: string;
  express: unknown;
  history: [string, string][];
}

/** Folds the feed's events (in position order) back into the records. */
export function foldFeed(events: readonly FeedEvent[]): Map<number, FoldedRecord> {
  const records = new Map<number, FoldedRecord>();
  for (const event of events) {
    if (event.kind === 'stored') {
      if (records.has(event.rawId)) throw new Error(`rawId ${event.rawId} stored twice`);
      const f = event.fields;
      records.set(event.rawId, {
        status: f.status,
        internalStatus: f.internalStatus,
        targetChainTxHash: f.targetChainTxHash,
        express: f.express,
        history: [[f.status, f.internalStatus]],
      });
      continue;
    }
    const record = records.get(event.rawId);
    if (record === undefined) throw new Error(`rawId ${event.rawId} changed before it was stored`);
    const f = event.fields;
    if (f.status !== undefined) record.status = f.status[1];
    if (f.internalStatus !== undefined) record.internalStatus = f.internalStatus[1];
    if (f.targetChainTxHash !== undefined) record.targetChainTxHash = f.targetChainTxHash[1];
    if (f.express !== undefined) record.express = f.express[1];
    if (f.status !== undefined || f.internalStatus !== undefined) {
      record.history.push([record.status, record.internalStatus]);
    }
  }
  return records;
}

/** Events 1 … n (or the positions given) as the feed serves them, with varied actions, tokens and kinds. */
export function syntheticEvents(positions: readonly number[]): FeedEvent[] {
  const actions = ['transfer', 'mint', 'burn', 'bundle'];
  const tags = [
    'ethereum-usdc-0xa0b86991c6218b36c1d19d4a2e9eb0ce3606eb48',
    'arweave-ar-0',
    'bsc-odd tag.x*>-0',
  ];
  return positions.map((position) => {
    const base = {
      position,
      rawId: 1000 + position,
      action: actions[position % actions.length] as string,
      tokenTag: tags[position % tags.length] as string,
      from: `0x${position.toString(16).padStart(40, 'a')}`,
      to: 'eid-receiver',
      stampedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, position)).toISOString(),
    };
    return position % 5 === 0
      ? { ...base, kind: 'changed', fields: { status: ['confirmed', 'packaged'] } }
      : {
          ...base,
          kind: 'stored',
          fields: {
            status: 'confirmed',
            internalStatus: '{"status":"success"}',
            targetChainTxHash: '',
            express: { chainTxHash: '', withdrawFee: '0.5', refundLedgerHash: '', err: '' },
          },
        };
  });
}
