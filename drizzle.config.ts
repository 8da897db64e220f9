import { defineConfig } from 'drizzle-kit';

// drizzle-kit only generates SQL from the schema; it needs no database connection.
export default defineConfig({
  dialect: 'postgresql',
  schema: [
    './src/db/schema/tables.ts',
    './src/db/schema/feed-tables.ts',
    './src/db/schema/sink-tables.ts',
    './src/db/schema/views.ts',
  ],
  out: './migrations',
  casing: 'snake_case',
});
