import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import pg from 'pg';
import { textArray } from '../../src/db/text-array.js';
import { adminUrl } from '../helpers/database.js';

describe('text array literals (how every written column travels)', () => {
  let client: pg.Client;
  before(async () => {
    client = new pg.Client({ connectionString: adminUrl() });
    await client.connect();
  });
  after(async () => {
    await client?.end();
  });

  const roundTrip = async (values: Array<string | null>) =>
    (
      await client.query<{ v: string | null }>('SELECT unnest($1::text[]) AS v', [textArray(values)])
    ).rows.map((r) => r.v);

  it('reads back exactly what was sent, with or without characters to escape', async () => {
    const plain = ['0xAbC', 'eid1', '', ' spaced ', 'a,b', '{braces}', 'NULL', 'héllo 🚀'];
    assert.deepEqual(await roundTrip(plain), plain);
    const escaped = [...plain, '{"bundle":{"items":[]}}', 'back\\slash', '\\"', null, 'end\\'];
    assert.deepEqual(await roundTrip(escaped), escaped);
    assert.deepEqual(await roundTrip([null]), [null]);
    assert.deepEqual(await roundTrip([]), []);
  });
});
