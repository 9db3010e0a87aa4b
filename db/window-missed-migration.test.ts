import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordAttempt } from '@/db/queries/attempts';
import { insertTestJob, readJob } from '@/testing/jobs';
import { createTestDatabase, type TestDatabase } from '@/testing/db';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

const migration = readFileSync(new URL('./migrations/0009_window_missed.sql', import.meta.url), 'utf8');

async function details(jobId: string): Promise<Array<string | null>> {
  const { rows } = await t.pool.query<{ detail: string | null }>('select detail from delivery_attempts where job_id = $1 order by id', [jobId]);
  return rows.map((row) => row.detail);
}

describe('migration 0009: deadline_passed and quiet_hours_past_deadline become window_missed', () => {
  it('renames the reason on suppressed jobs and the details on their attempts, and nothing else', async () => {
    const late = await insertTestJob(t.db, { state: 'suppressed' });
    const quiet = await insertTestJob(t.db, { state: 'suppressed' });
    const other = await insertTestJob(t.db, { state: 'suppressed' });
    await t.pool.query(`update reminder_jobs set suppression_reason = $2 where id = $1`, [late.id, 'deadline_passed']);
    await t.pool.query(`update reminder_jobs set suppression_reason = $2 where id = $1`, [quiet.id, 'quiet_hours_past_deadline']);
    await t.pool.query(`update reminder_jobs set suppression_reason = $2 where id = $1`, [other.id, 'unsubscribed']);
    const base = { workerId: 'w', startedAt: new Date(), mode: 'enforce' as const };
    await recordAttempt(t.db, { ...base, jobId: late.id, noticeKey: late.noticeKey, outcome: 'deferred', detail: 'early' });
    await recordAttempt(t.db, { ...base, jobId: late.id, noticeKey: late.noticeKey, outcome: 'suppressed_policy', detail: 'deadline_passed' });
    await recordAttempt(t.db, { ...base, jobId: quiet.id, noticeKey: quiet.noticeKey, outcome: 'suppressed_policy', detail: 'quiet_hours_past_deadline' });
    await recordAttempt(t.db, { ...base, jobId: other.id, noticeKey: other.noticeKey, outcome: 'suppressed_policy', detail: 'unsubscribed' });

    for (const statement of migration.split('--> statement-breakpoint')) await t.pool.query(statement);

    expect((await readJob(t.db, late.id)).suppressionReason).toBe('window_missed');
    expect((await readJob(t.db, quiet.id)).suppressionReason).toBe('window_missed');
    expect((await readJob(t.db, other.id)).suppressionReason).toBe('unsubscribed');
    expect(await details(late.id)).toEqual(['early', 'window_missed']);
    expect(await details(quiet.id)).toEqual(['quiet_hours_cover_window']);
    expect(await details(other.id)).toEqual(['unsubscribed']);
  });
});
