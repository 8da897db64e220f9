import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { sql } from 'drizzle-orm';
import { openDatabase } from '../../src/db/connect.js';
import { queryRows } from '../../src/db/rows.js';
import { createTestDatabase, type TestDatabase } from '../helpers/database.js';

/** The settings of a session the indexer opens on `url`. */
async function sessionSettings(url: string, readOnly = false) {
  const database = await openDatabase({ databaseUrl: url, maxConnections: 1, readOnly });
  try {
    const [row] = await queryRows<{ plan: string; jit: string; timeout: string; read_only: string }>(
      database.db,
      sql`SELECT current_setting('plan_cache_mode') AS plan, current_setting('jit') AS jit,
        current_setting('statement_timeout') AS timeout,
        current_setting('default_transaction_read_only') AS read_only`,
    );
    return row;
  } finally {
    await database.close();
  }
}

describe("the indexer's PostgreSQL sessions", () => {
  let db: TestDatabase;
  before(async () => {
    db = await createTestDatabase();
  });
  after(() => db.drop());

  it('plan every statement for its own parameters, and compile none', async () => {
    assert.deepEqual(await sessionSettings(db.url), {
      plan: 'force_custom_plan',
      jit: 'off',
      timeout: '0',
      read_only: 'off',
    });
  });

  it("keep the URL's own options, and still plan for the parameters (and read only when asked)", async () => {
    const url = new URL(db.url);
    url.searchParams.set('options', '-c statement_timeout=12345');
    assert.deepEqual(await sessionSettings(url.toString()), {
      plan: 'force_custom_plan',
      jit: 'off',
      timeout: '12345ms',
      read_only: 'off',
    });
    assert.deepEqual(await sessionSettings(url.toString(), true), {
      plan: 'force_custom_plan',
      jit: 'off',
      timeout: '12345ms',
      read_only: 'on',
    });
  });
});
