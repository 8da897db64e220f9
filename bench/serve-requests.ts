/**
 * The requests of the serve scenario's load runs, as a mirror's users would send them: list
 * answers by key (the global list both ways, by token tag, an account's list) and look-ups by
 * hash, drawn from a sample of the mirror itself, each with the check its answer must pass.
 */
import { createRng, type Rng } from '../src/simulator/random.js';
import type { ScenarioDatabase } from './databases.js';
import { type AnswerCheck, LIST_COUNT, type PlannedRequest } from './serve-load.js';

/** What the requests are drawn from: read from the mirror before the load. */
export interface MirrorSample {
  /** The global list's rawIds span up to its watermark (answers stop there). */
  lowestRawId: number;
  watermark: number;
  /** Accounts of randomly sampled records (a busy account as often as it appears). */
  accounts: string[];
  /** The stored `/info` token tags. */
  tags: string[];
  /** Ledger hashes of randomly sampled records. */
  hashes: string[];
}

/** Reads a sample of the mirror: its rawId span, accounts and hashes of random records, its tags. */
export async function sampleMirror(database: ScenarioDatabase, hashes: number): Promise<MirrorSample> {
  const [span] = await database.query<{ lo: string; watermark: string | null }>(
    `SELECT (SELECT min(raw_id) FROM ledger_transactions)::text AS lo,
       (SELECT watermark FROM sync_streams WHERE key = $1)::text AS watermark`,
    [GLOBAL_KEY],
  );
  if (span?.watermark === null || span?.watermark === undefined)
    throw new Error('the mirror has no backfilled global list');
  const rows = await database.query<{ hash: string; from_account: string; to_account: string }>(
    `SELECT ledger_hash AS hash, from_account, to_account FROM ledger_transactions
     TABLESAMPLE BERNOULLI ($1) REPEATABLE (42) LIMIT $2`,
    [Math.min(100, (200 * hashes) / Math.max(1, await database.countRows())), hashes],
  );
  const tags = await database.query<{ tag: string }>('SELECT tag FROM ledger_tokens ORDER BY tag');
  if (rows.length === 0 || tags.length === 0) throw new Error('the mirror holds no records or no tokens');
  return {
    lowestRawId: Number(span.lo),
    watermark: Number(span.watermark),
    accounts: rows.slice(0, 500).flatMap((r, i) => (i % 2 === 0 ? [r.from_account] : [r.to_account])),
    tags: tags.map((t) => t.tag),
    hashes: rows.map((r) => r.hash),
  };
}

/** The global list's stream key (`streamKey({})`). */
const GLOBAL_KEY = 'txs';

/** A kind of list request and its share of the mix. */
interface ListKind {
  kind: string;
  share: number;
  plan(rng: Rng, sample: MirrorSample): ListPlan;
}

/** What one list request asks, enough to check its answer. */
interface ListPlan {
  path: string;
  order: 'asc' | 'desc';
  cursor: number | undefined;
  account?: string;
}

const cursorIn = (rng: Rng, sample: MirrorSample): number =>
  rng.int(sample.lowestRawId - 1, sample.watermark);

/**
 * The mix of list requests, as a mirror's users would issue them: mostly the global list read
 * forward from a cursor, some backward, some by token tag, and an account's list (its newest page,
 * or from a cursor). Every request asks {@link LIST_COUNT} records.
 */
export const LIST_MIX: readonly ListKind[] = [
  {
    kind: 'global asc from a cursor',
    share: 0.45,
    plan: (rng, s) => keyPlan({ order: 'asc', cursor: cursorIn(rng, s) }),
  },
  {
    kind: 'global desc from a cursor',
    share: 0.2,
    plan: (rng, s) => keyPlan({ order: 'desc', cursor: cursorIn(rng, s) }),
  },
  {
    kind: 'global asc by tokenTag',
    share: 0.15,
    plan: (rng, s) => keyPlan({ order: 'asc', cursor: cursorIn(rng, s), tokenTag: rng.pick(s.tags) }),
  },
  {
    kind: 'account, newest page',
    share: 0.1,
    plan: (rng, s) => keyPlan({ order: 'desc', cursor: undefined, account: rng.pick(s.accounts) }),
  },
  {
    kind: 'account asc from a cursor',
    share: 0.1,
    plan: (rng, s) => keyPlan({ order: 'asc', cursor: cursorIn(rng, s), account: rng.pick(s.accounts) }),
  },
];

function keyPlan(input: {
  order: 'asc' | 'desc';
  cursor: number | undefined;
  tokenTag?: string;
  account?: string;
}): ListPlan {
  const params = new URLSearchParams();
  if (input.cursor !== undefined) params.set('cursor', String(input.cursor));
  params.set('order', input.order);
  params.set('count', String(LIST_COUNT));
  if (input.tokenTag !== undefined) params.set('tokenTag', input.tokenTag);
  const base = input.account === undefined ? '/txs' : `/txs/${encodeURIComponent(input.account)}`;
  return {
    path: `${base}?${params}`,
    order: input.order,
    cursor: input.cursor,
    ...(input.account === undefined ? {} : { account: input.account }),
  };
}

/** One answer in this many is parsed whole and checked record by record; the others are counted. */
export const PARSED_ONE_IN = 20;

/** A planner of list requests for each client, from the mix, seeded per client. */
export function listRequests(sample: MirrorSample, seed: number): (client: number) => PlannedRequest {
  const rngs = new Map<number, Rng>();
  let sent = 0;
  return (client) => {
    const rng = rngs.get(client) ?? createRng(seed, client);
    rngs.set(client, rng);
    const kind = pickKind(rng.next());
    const plan = kind.plan(rng, sample);
    const whole = sent++ % PARSED_ONE_IN === 0;
    return { kind: kind.kind, path: plan.path, check: (body) => checkListAnswer(body, plan, whole) };
  };
}

/** The kind of the mix whose share holds `roll` (0 to 1). */
function pickKind(roll: number): ListKind {
  let below = 0;
  for (const kind of LIST_MIX) {
    below += kind.share;
    if (roll < below) return kind;
  }
  return LIST_MIX[0]!;
}

const RECORD_START = Buffer.from('{"rawId":');
const MORE = Buffer.from('"hasNextPage":true}');
const END = Buffer.from('"hasNextPage":false}');

/**
 * A key answer holds {@link LIST_COUNT} records, or fewer at the list's end (`hasNextPage`
 * false). Counted in the bytes; with `whole`, parsed and checked record by record: the order
 * asked, every rawId past the cursor, every record the account's.
 */
export function checkListAnswer(body: Buffer, plan: ListPlan, whole: boolean): AnswerCheck {
  let records = 0;
  for (
    let at = body.indexOf(RECORD_START);
    at >= 0;
    at = body.indexOf(RECORD_START, at + RECORD_START.length)
  )
    records += 1;
  const more = body.subarray(body.length - MORE.length).equals(MORE);
  if (!more && !body.subarray(body.length - END.length).equals(END))
    return { ok: false, why: 'no hasNextPage' };
  if (records > LIST_COUNT || (records < LIST_COUNT && more))
    return { ok: false, why: `${records} records, hasNextPage ${more}` };
  return whole ? checkRecords(body, plan, records) : { ok: true, records, short: records < LIST_COUNT };
}

function checkRecords(body: Buffer, plan: ListPlan, counted: number): AnswerCheck {
  const answer = JSON.parse(body.toString('utf8')) as {
    txs: Array<{ rawId: number; from: string; to: string }>;
  };
  if (answer.txs.length !== counted)
    return { ok: false, why: `parsed ${answer.txs.length}, counted ${counted}` };
  const sign = plan.order === 'asc' ? 1 : -1;
  let last = plan.cursor;
  const same = (a: string, b: string) =>
    a === b || (a.startsWith('0x') && a.toLowerCase() === b.toLowerCase());
  for (const tx of answer.txs) {
    if (last !== undefined && (tx.rawId - last) * sign <= 0)
      return { ok: false, why: `rawId ${tx.rawId} after ${last} in ${plan.order} order` };
    if (plan.account !== undefined && !same(tx.from, plan.account) && !same(tx.to, plan.account))
      return { ok: false, why: `rawId ${tx.rawId} is not ${plan.account}'s` };
    last = tx.rawId;
  }
  return { ok: true, records: counted, short: counted < LIST_COUNT };
}

/** A planner of look-ups by hash (`/tx/{hash}`): a random stored hash each, its answer holding that record. */
export function hashLookups(sample: MirrorSample, seed: number): (client: number) => PlannedRequest {
  const rng = createRng(seed, 7);
  return () => {
    const hash = rng.pick(sample.hashes);
    const expected = Buffer.from(`"ledgerHash":${JSON.stringify(hash)}`);
    return {
      kind: 'look-up by hash',
      path: `/tx/${encodeURIComponent(hash)}`,
      check: (body) =>
        body.indexOf(expected) >= 0
          ? { ok: true, records: 1, short: false }
          : { ok: false, why: 'not the record asked for' },
    };
  };
}
