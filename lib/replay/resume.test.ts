import { randomBytes } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createUser } from '@/db/queries/users';
import { replays } from '@/db/schema';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob } from '@/testing/jobs';
import { createLogger } from '@/lib/log';
import { createPgBossQueue } from '@/lib/queue/pgboss';
import { startReplayRunner } from './runner';
import { scheduleUploadedItem } from './schedule-item';
import { decideReplay, requestReplay, startReplay } from './service';
import type { Actor } from './transitions';

/**
 * Whoever moved a replay to running (the console, the CLI) may be gone at once: the replay is
 * `running` in the database, and a worker's replay runner must pick it up and finish it.
 */
let t: TestDatabase;
let queueName: string;

async function user(role: Actor['role']): Promise<Actor> {
  const row = await createUser(t.db, { email: `${role}-${randomBytes(3).toString('hex')}@test.local`, name: role, role, passwordHash: null });
  if (!row) throw new Error('user not created');
  return { id: row.id, email: row.email, role };
}

beforeAll(async () => {
  t = await createTestDatabase();
  queueName = `resume-${randomBytes(4).toString('hex')}`;
});

afterAll(async () => {
  await t.drop();
});

describe('a worker picks up running replays', () => {
  it('publishes a replay left running by the process that started it, each of its jobs once', async () => {
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

    const queue = createPgBossQueue({ url: t.url, queueName, visibilityTimeoutMs: 30_000 });
    await queue.start();
    const runner = startReplayRunner({
      db: t.db,
      queue,
      every: 50,
      batchSize: 2,
      perDomainPerSecond: 10_000,
      scheduleItem: scheduleUploadedItem,
      logger: createLogger('test', 'silent'),
    });
    try {
      await vi.waitFor(
        async () => {
          const [current] = await t.db.select({ state: replays.state }).from(replays).where(eq(replays.id, id));
          expect(current?.state).toBe('completed');
        },
        { timeout: 20_000, interval: 50 },
      );
    } finally {
      await runner.stop();
      await queue.stop();
    }

    const [row] = await t.db.select().from(replays).where(eq(replays.id, id));
    expect(row?.state).toBe('completed');
    expect(row?.published).toBe(3);
    const wakeups = await t.pool.query<{ n: number }>("select count(*)::int as n from pgboss.job where name = $1 and data->>'batchId' = $2", [
      queueName,
      row?.batchId,
    ]);
    expect(wakeups.rows[0]?.n).toBe(3);
  });
});
