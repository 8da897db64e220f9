import pg from 'pg';

/** A database made for one scenario on the `DATABASE_URL` server, dropped afterwards. */
export interface ScenarioDatabase {
  name: string;
  url: string;
  /** Rows of `ledger_transactions`. */
  countRows(): Promise<number>;
  query<R extends pg.QueryResultRow>(text: string, values?: unknown[]): Promise<R[]>;
  drop(): Promise<void>;
}

/** The admin connection string: `DATABASE_URL`, else the local server's `postgres` database. */
export function adminUrl(env: Record<string, string | undefined>): string {
  return env['DATABASE_URL'] ?? 'postgres://postgres@127.0.0.1:5432/postgres';
}

/** `CREATE DATABASE bench_<scenario>_<pid>` (dropping a leftover of the same name first). */
export async function createScenarioDatabase(admin: string, scenario: string): Promise<ScenarioDatabase> {
  const name = `bench_${scenario.replace(/[^a-z0-9_]/gi, '_').toLowerCase()}_${process.pid}`;
  await withClient(admin, async (client) => {
    await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await client.query(`CREATE DATABASE ${name}`);
  });
  const url = new URL(admin);
  url.pathname = `/${name}`;
  const connection = url.toString();
  return {
    name,
    url: connection,
    async countRows() {
      const rows = await withClient(connection, (client) =>
        client.query<{ n: string }>('SELECT count(*)::text AS n FROM ledger_transactions'),
      );
      return Number(rows.rows[0]?.n ?? 0);
    },
    async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []) {
      const result = await withClient(connection, (client) => client.query<R>(text, values));
      return result.rows;
    },
    async drop() {
      await withClient(admin, (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}

/** Runs `fn` on a fresh connection to `url` and closes it. */
export async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url });
  client.on('error', () => undefined);
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The server's version line, for the machine record; null when unreachable. */
export async function postgresVersion(url: string): Promise<string | null> {
  try {
    return await withClient(url, async (client) => {
      const result = await client.query<{ v: string }>("SELECT current_setting('server_version') AS v");
      return result.rows[0]?.v ?? null;
    });
  } catch {
    return null;
  }
}
