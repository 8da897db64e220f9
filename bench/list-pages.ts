/**
 * The global list's pages over a keep-alive pool, as the hand-written baselines and the ceilings
 * fetch them: one GET per page, the body parsed whole. Not the indexer's client (that one is
 * measured).
 */
import { Pool } from 'undici';
import type { WireRecord } from './row-encoding.js';

export interface ListPages {
  fetchPage(page: number): Promise<{ totalPages: number; txs: WireRecord[] }>;
  close(): Promise<void>;
}

/** `connections` kept-alive connections to `baseUrl`; a non-200 answer throws, named after `who`. */
export function listPages(baseUrl: string, connections: number, who: string): ListPages {
  const origin = new URL(baseUrl);
  const prefix = origin.pathname.replace(/\/$/, '');
  const pool = new Pool(origin.origin, { connections, keepAliveTimeout: 30_000 });
  return {
    async fetchPage(page) {
      const response = await pool.request({ method: 'GET', path: `${prefix}/txs?page=${page}` });
      if (response.statusCode !== 200) throw new Error(`${who}: HTTP ${response.statusCode} on page ${page}`);
      const body = JSON.parse(await response.body.text()) as { totalPages: number; txs: WireRecord[] | null };
      return { totalPages: body.totalPages, txs: body.txs ?? [] };
    },
    close: () => pool.close(),
  };
}

/** Records a key request asks for: the deployed clients' count, and the indexer's default. */
export const KEY_COUNT = 100;

/** The global list read by key, as the service's own clients read it. */
export interface KeyPages {
  /** Up to `count` records after rawId `cursor` (0: from the oldest), oldest first. */
  fetchAfter(cursor: number, count?: number): Promise<{ hasNextPage: boolean; txs: WireRecord[] }>;
  /** The newest rawId (`order=desc&count=1`); null for an empty list. */
  newest(): Promise<number | null>;
  close(): Promise<void>;
}

/** One kept-alive connection to `baseUrl` (a walk by key has one request in flight); named after `who`. */
export function keyPages(baseUrl: string, who: string): KeyPages {
  const origin = new URL(baseUrl);
  const prefix = origin.pathname.replace(/\/$/, '');
  const pool = new Pool(origin.origin, { connections: 1, keepAliveTimeout: 30_000 });
  const get = async (path: string, cursor: number) => {
    const response = await pool.request({ method: 'GET', path });
    if (response.statusCode !== 200)
      throw new Error(`${who}: HTTP ${response.statusCode} after rawId ${cursor}`);
    return JSON.parse(await response.body.text()) as { hasNextPage: boolean; txs: WireRecord[] | null };
  };
  return {
    async newest() {
      const body = await get(`${prefix}/txs?order=desc&count=1`, 0);
      return body.txs?.[0]?.rawId ?? null;
    },
    async fetchAfter(cursor, count = KEY_COUNT) {
      const body = await get(`${prefix}/txs?cursor=${cursor}&order=asc&count=${count}`, cursor);
      return { hasNextPage: body.hasNextPage === true, txs: body.txs ?? [] };
    },
    close: () => pool.close(),
  };
}
