/**
 * One mirror, many `sync` runs as operators make them: the dialect, the count, the writers, the
 * stream (global, accounts, filtered lists) and `--full` chosen at random, each run killed
 * (SIGKILL), stopped (SIGTERM) or left to finish, against a service with arrivals, late records,
 * status changes, errors, cut answers, hangs and malformed records. No run may fail for what an
 * earlier one left, and once the service settles, the last runs end with the mirror equal to it,
 * `verify` finding every stream complete, and nothing left open: no walk, no parallel backfill
 * running, no index deferred.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { queryRows } from '../../src/db/rows.js';
import { createSimulator, type Simulator } from '../../src/simulator/index.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { withSeed } from '../helpers/seed.js';
import { runCli } from './sync-cli-run.js';
import { assertMirrorsTruth } from './sync-truth.js';

const ROUNDS = 16;
let sim: Simulator | undefined;
let testDb: TestDatabase | undefined;
after(async () => {
  await sim?.close();
  await testDb?.drop();
});

describe('sync runs interrupted at random across dialects, counts and streams', () => {
  it('never fails for what an earlier run left, and ends equal to the service with nothing left open', () =>
    withSeed(async (rng, seed) => {
      sim = createSimulator({
        records: 2500,
        seed,
        paging: 'both',
        arrivalsPerSecond: 40,
        lateRate: 0.1,
        lateMs: 1500,
        packageDelayMs: 1500,
        burnTargetDelayMs: 3000,
        faults: { latencyMs: 2, errorRate: 0.03, truncateRate: 0.02, hangRate: 0.005, malformedRate: 0.005 },
      });
      const { url } = await sim.listen();
      testDb = await createTestDatabase();
      const env = {
        LEDGER_BASE_URL: url,
        DATABASE_URL: testDb.url,
        LEDGER_REQUESTS_PER_SECOND: '0',
        LEDGER_RETRY_MIN_MS: '10',
        LEDGER_RETRY_MAX_MS: '100',
        LEDGER_REQUEST_TIMEOUT_MS: '800',
        LOG_LEVEL: 'warn',
      };
      const records = [...sim.records()];
      const streams: string[][] = [
        [],
        [],
        ['--account', records[5]!.from],
        ['--account', records[17]!.to, '--account', records[100]!.from],
        ['--action', 'transfer'],
        ['--without-action', 'mint'],
      ];
      const used = new Set<string>(['[]']);
      const runs: string[] = [];
      for (let round = 0; round < ROUNDS; round++) {
        const stream = rng.pick(streams);
        used.add(JSON.stringify(stream));
        const args = ['sync', '--paging', rng.pick(['key', 'key', 'page', 'auto']), '--count'];
        args.push(rng.pick(['20', '50', '100']), '--recheck-after-ms', rng.pick(['0', '1000']), ...stream);
        if (rng.chance(0.2)) args.push('--full');
        const run = runCli(args, { ...env, LEDGER_WRITERS: rng.pick(['1', '2', '3']) });
        const signal = rng.pick(['SIGKILL', 'SIGTERM', null] as const);
        const at = rng.int(150, 2500);
        const timer = signal === null ? undefined : setTimeout(() => run.child.kill(signal), at);
        const out = await run.done;
        clearTimeout(timer);
        runs.push(`${args.join(' ')} (${signal ?? 'left'} at ${at} ms): ${out.code ?? out.signal}`);
        // 143: stopped by SIGTERM after the pages in flight; ended by the signal itself when it
        // lands as the process exits, its handlers gone. Anything else is a failure.
        assert.ok(
          (signal !== null && out.signal === signal) || out.code === 0 || out.code === 143,
          `${runs.join('\n')}\n${out.stderr.slice(-2000)}`,
        );
      }
      sim.pauseArrivals();
      await new Promise((resolve) => setTimeout(resolve, 1600));
      sim.settleAll();
      sim.setFaults({ errorRate: 0, truncateRate: 0, hangRate: 0 });
      for (const stream of [...used].map((u) => JSON.parse(u) as string[])) {
        const args = ['sync', '--paging', rng.pick(['key', 'page']), '--recheck-after-ms', '0', ...stream];
        const out = await runCli(args, env).done;
        assert.equal(out.code, 0, `${runs.join('\n')}\n${args.join(' ')}\n${out.stderr.slice(-2000)}`);
      }
      // The global list last, by key: it re-reads every record the runs left waiting.
      const last = await runCli(['sync', '--paging', 'key', '--recheck-after-ms', '0'], env).done;
      assert.equal(last.code, 0, last.stderr.slice(-2000));
      const verify = await runCli(['verify', '--paging', 'key'], env).done;
      assert.equal(verify.code, 0, `${runs.join('\n')}\n${verify.stdout}`);
      await assertMirrorsTruth(testDb.database.db, sim);
      const open = await queryRows<{ what: string }>(
        testDb.database.db,
        sql`SELECT 'walk of ' || key AS what FROM sync_streams WHERE walk IS NOT NULL OR watermark IS NULL
            UNION ALL SELECT 'backfill ' || status || ' of ' || stream_key FROM backfill_runs WHERE status <> 'done'
            UNION ALL SELECT 'deferred index ' || name FROM deferred_indexes`,
      );
      assert.deepEqual(open, [], `${runs.join('\n')}\nleft open`);
    }));
});
