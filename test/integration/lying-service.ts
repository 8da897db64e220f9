/**
 * A key-dialect service that lies once: a scripted server in front of the simulator that adds a
 * phantom record (a copy of a real one, its rawId 10^15) to one list answer, for the tests that
 * check such a record never blinds the mirror. Also what those tests read back.
 */
import { sql } from 'drizzle-orm';
import type { Db } from '../../src/db/drizzle-db.js';
import { queryRows } from '../../src/db/rows.js';
import { type RecordedRequest, startHttpServer, type TestHttpServer } from '../helpers/http-server.js';
import { forward } from '../helpers/proxy.js';

export const PHANTOM_RAW_ID = 1_000_000_000_000_000;

/** Which answer the lie goes into, and how. */
export interface Lie {
  /** The first list answer whose request this accepts gets the phantom. */
  when: (request: RecordedRequest) => boolean;
  /** The phantom's place: the middle of the answer, or its end (an ascending answer's last). */
  at: 'middle' | 'end';
  /** A timestamp the database cannot hold besides (10^15 ms: the year 33658). */
  absurdTimestamp?: boolean;
}

/** The server in front of the simulator, and what it did. */
export interface LyingService {
  server: TestHttpServer;
  url: string;
  /** Arms one lie (the next answer `when` accepts); `told` says whether it was served. */
  lie(lie: Lie): void;
  told(): boolean;
  /** The real record the phantom copied (its hash the phantom's). */
  copied(): number | null;
  /** Points the server at another simulator (one started after it). */
  retarget(url: string): void;
  close(): Promise<void>;
}

export async function startLyingService(first: string): Promise<LyingService> {
  let target = first;
  let armed: Lie | null = null;
  let told = false;
  let copied: number | null = null;
  const server = await startHttpServer(async (request) => {
    const reply = await forward(target, request);
    const lie = armed;
    if (lie === null || request.rawPath !== '/txs' || reply.status !== 200 || !lie.when(request))
      return reply;
    const body = JSON.parse(String(reply.body)) as { txs: Array<Record<string, unknown>> };
    if (body.txs.length < 2) return reply;
    armed = null;
    told = true;
    const middle = Math.floor(body.txs.length / 2);
    const original = body.txs[middle]!;
    copied = Number(original['rawId']);
    const phantom = {
      ...original,
      rawId: PHANTOM_RAW_ID,
      ...(lie.absurdTimestamp ? { timestamp: 1_000_000_000_000_000 } : {}),
    };
    const descending = request.query.get('order')?.toLowerCase() === 'desc';
    if (lie.at === 'middle') body.txs.splice(middle, 0, phantom);
    else if (descending) body.txs.unshift(phantom);
    else body.txs.push(phantom);
    return { ...reply, body: JSON.stringify(body) };
  });
  return {
    server,
    url: server.baseUrl,
    lie: (lie) => {
      armed = lie;
      told = false;
    },
    told: () => told,
    copied: () => copied,
    retarget: (url) => {
      target = url;
    },
    close: () => server.close(),
  };
}

/** An ascending list answer by key asked after `cursor` at or above `from`. */
export function ascendingAfter(from: number): (request: RecordedRequest) => boolean {
  return (request) =>
    request.query.get('order')?.toLowerCase() === 'asc' && Number(request.query.get('cursor') ?? 0) >= from;
}

/** The global stream's watermark. */
export async function watermarkOf(db: Db): Promise<number | null> {
  const rows = await queryRows<{ watermark: string | null }>(
    db,
    sql`SELECT watermark::text AS watermark FROM sync_streams WHERE key = 'txs'`,
  );
  return rows[0]?.watermark == null ? null : Number(rows[0].watermark);
}

/** The rejected rows that hold the phantom's text. */
export async function phantomRows(db: Db): Promise<Array<{ reason: string; raw_id: string | null }>> {
  return queryRows<{ reason: string; raw_id: string | null }>(
    db,
    sql`SELECT reason, raw_id::text AS raw_id FROM rejected_records WHERE raw_text LIKE ${`%${PHANTOM_RAW_ID}%`}`,
  );
}

/** The highest rawId any proof of the global stream covers. */
export async function provenTop(db: Db): Promise<number | null> {
  const rows = await queryRows<{ top: string | null }>(
    db,
    sql`SELECT max(hi)::text AS top FROM backfill_proven_ranges WHERE stream_key = 'txs'`,
  );
  return rows[0]?.top == null ? null : Number(rows[0].top);
}
