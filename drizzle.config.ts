import { defineConfig } from 'drizzle-kit';

// Migrations are generated only (`npm run db:generate`) and applied in code at start-up
// (db/migrate.ts); drizzle-kit never talks to a database here.
export default defineConfig({
  dialect: 'postgresql',
  schema: './db/schema/index.ts',
  out: './db/migrations',
});
