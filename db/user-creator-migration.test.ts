import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const migration = readFileSync(new URL('./migrations/0025_user_creator_backfill.sql', import.meta.url), 'utf8');

async function insertUser(email: string): Promise<string> {
  const { rows } = await t.pool.query<{ id: string }>(`insert into users (email, name, role) values ($1, $1, 'manager') returning id`, [email]);
  return rows[0]?.id ?? '';
}

describe('migration 0025: users created before created_by get it from their user.create audit row', () => {
  it('sets the creating console user, leaves CLI-created and already-set users alone', async () => {
    const admin = await insertUser('admin@backfill.example.com');
    const byAdmin = await insertUser('made-by-admin@backfill.example.com');
    const byCli = await insertUser('made-by-cli@backfill.example.com');
    const set = await insertUser('already-set@backfill.example.com');
    await t.pool.query(`update users set created_by = $2 where id = $1`, [set, byAdmin]);
    const audit = `insert into audit_log (actor, action, target_type, target_id, reason) values ($1, 'user.create', 'user', $2, 'hire')`;
    await t.pool.query(audit, ['admin@backfill.example.com', byAdmin]);
    await t.pool.query(audit, ['cli:root', byCli]);
    await t.pool.query(audit, ['admin@backfill.example.com', set]);

    for (const statement of migration.split('--> statement-breakpoint')) await t.pool.query(statement);

    const { rows } = await t.pool.query<{ email: string; created_by: string | null }>('select email, created_by from users order by email');
    expect(Object.fromEntries(rows.map((row) => [row.email, row.created_by]))).toEqual({
      'admin@backfill.example.com': null,
      'already-set@backfill.example.com': byAdmin,
      'made-by-admin@backfill.example.com': admin,
      'made-by-cli@backfill.example.com': null,
    });
  });
});
