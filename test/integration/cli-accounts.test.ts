/**
 * Account text on the command line is bounded and printable, and `status` stays readable when a
 * stream with a very long key is already stored.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { streamKey } from '../../src/domain/stream-key.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';
import { runCli } from './sync-cli-run.js';

let testDb: TestDatabase;

before(async () => {
  testDb = await createTestDatabase();
});

after(async () => {
  await testDb.drop();
});

/** Runs the command and returns its exit code and its stderr lines. */
async function failing(args: string[]): Promise<{ code: number | null; lines: string[] }> {
  const run = runCli(args, {
    DATABASE_URL: testDb.url,
    LEDGER_BASE_URL: 'http://127.0.0.1:9',
    REDIS_URL: 'redis://127.0.0.1:9',
    LOG_LEVEL: 'silent',
  });
  const { code, stderr } = await run.done;
  return { code, lines: stderr.trim().split('\n') };
}

describe('--account is validated', () => {
  const bad = [
    ['10 KB', `0x${'a'.repeat(10_240)}`, /must be at most 128 characters \(got 10242: "0xaaaa/],
    ['a newline', '0xabc\n', /must not contain spaces or control characters \(got "0xabc\\n"\)/],
    ['spaces', ' 0xabc ', /must not contain spaces or control characters/],
    ['empty', '', /must not be empty/],
  ] as const;
  for (const command of ['sync', 'schedule'] as const) {
    for (const [what, account, message] of bad) {
      it(`${command}: an account with ${what} exits 2 with one line naming --account`, async () => {
        const { code, lines } = await failing([command, '--account', account]);
        assert.equal(code, 2, lines.join('\n'));
        assert.equal(lines.length, 1, lines.join('\n'));
        assert.match(lines[0] ?? '', new RegExp(`^ledger-indexer ${command}: --account: `));
        assert.match(lines[0] ?? '', message);
        assert.ok((lines[0] ?? '').length < 200, `line of ${(lines[0] ?? '').length} characters`);
      });
    }
  }
});

describe('status with a long stream key already stored', () => {
  it('keeps each line of the table readable and the key whole in --json', async () => {
    const account = `eid${'x'.repeat(10_000)}`;
    const key = streamKey({ account });
    await testDb.database.db.execute(
      sql`INSERT INTO sync_streams (key, spec, created_at, updated_at)
          VALUES (${key}, ${JSON.stringify({ account })}::jsonb, now(), now())`,
    );
    const table = await runCli(['status'], { DATABASE_URL: testDb.url, LOG_LEVEL: 'silent' }).done;
    assert.equal(table.code, 0, table.stderr);
    const widest = Math.max(...table.stdout.split('\n').map((line) => line.length));
    assert.ok(widest <= 200, `a line of ${widest} characters`);
    assert.match(table.stdout, /txsByAccount\/eidxxx+…x+\s/);

    const json = await runCli(['status', '--json'], { DATABASE_URL: testDb.url, LOG_LEVEL: 'silent' }).done;
    assert.equal(json.code, 0, json.stderr);
    const streams = (JSON.parse(json.stdout) as { streams: Array<{ key: string }> }).streams;
    assert.ok(streams.some((s) => s.key === key));
  });
});
