import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { register } from '@/instrumentation';
import { createUser } from '@/db/queries/users';
import { replays } from '@/db/schema';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob } from '@/testing/jobs';
import { closeWakeupPublisher } from '@/lib/queue';
import { backgroundRunSettled } from './background';
import { decideReplay, requestReplay, startReplay } from './service';
import type { Actor } from './transitions';

/**
 * A replay run lives in the console process that started it. When that process restarts
 * mid-run, the replay is still `running` in the database; the console's start-up hook
 * (instrumentation.ts) must pick it up and finish it.
 */
let t: TestDatabase;

async function user(role: Actor['role']): Promise<Actor> {
  const row = await createUser(t.db, { email: `${role}-${randomBytes(3).toString('hex')}@test.local`, name: role, role, passwordHash: null });
  if (!row) throw new Error('user not created');
  return { id: row.id, email: row.email, role };
}

beforeAll(async () => {
  t = await createTestDatabase();
  process.env.DATABASE_URL = t.url;
  process.env.NEXT_RUNTIME = 'nodejs';
  process.env.QUEUE_NAME = `resume-${randomBytes(4).toString('hex')}`;
});

afterAll(async () => {
  await closeWakeupPublisher();
  await t.drop();
});

describe('console start-up', () => {
  it('resumes a replay left running by a restart and publishes each of its jobs once', async () => {
    const secret = process.env.NOTICE_KEY_SECRET ?? '';
    const [operator, manager] = [await user('operator'), await user('manager')];
    const source = `resume-${randomBytes(3).toString('hex')}`;
    for (let i = 0; i < 3; i += 1) await insertTestJob(t.db, { source, dueAt: new Date(Date.now() - 3_600_000) });
    const requested = await requestReplay(t.db, { actor: operator, input: { reason: 'lost wake-ups', filter: { source } }, secret });
    if (!requested.ok) throw new Error(requested.refusal.message);
    const id = requested.data.replay.id;
    expect((await decideReplay(t.db, { id, actor: manager, decision: 'approve', reason: 'checked' })).ok).toBe(true);
    // Started, then the process that would have run it went away: nothing was published.
    expect((await startReplay(t.db, { id, actor: operator, reason: 'go' })).ok).toBe(true);

    await register();
    await backgroundRunSettled(id);

    const [row] = await t.db.select().from(replays).where(eq(replays.id, id));
    expect(row?.state).toBe('completed');
    expect(row?.published).toBe(3);
    const wakeups = await t.pool.query<{ n: number }>("select count(*)::int as n from pgboss.job where name = $1 and data->>'batchId' = $2", [
      process.env.QUEUE_NAME,
      row?.batchId,
    ]);
    expect(wakeups.rows[0]?.n).toBe(3);
  });
});
