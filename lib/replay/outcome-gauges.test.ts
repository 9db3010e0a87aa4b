import { randomUUID } from 'node:crypto';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { deliveryAttempts, replays } from '@/db/schema';
import { registry } from '@/lib/metrics/registry';
import { refreshReplayGauges } from './outcome-gauges';
import { getReplayView } from './view';

/**
 * notice_ledger_replay_outcomes against real PostgreSQL: per running batch, sent, suppressed as
 * duplicate and failed as the attempt log has them; a batch that is not running has no label.
 */

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

async function addReplay(batchId: string, state: 'running' | 'completed'): Promise<string> {
  const [row] = await t.db
    .insert(replays)
    .values({ batchId, state, filter: { noticeType: 'renewal_notice_t72' }, requestedBy: randomUUID(), requestReason: 'test', startedAt: new Date() })
    .returning({ id: replays.id });
  if (!row) throw new Error('replay insert returned nothing');
  return row.id;
}

async function attempts(batchId: string, outcomes: ('sent' | 'suppressed_duplicate' | 'discarded' | 'permanent_failure' | 'deferred')[]): Promise<void> {
  await t.db.insert(deliveryAttempts).values(outcomes.map((outcome, index) => ({ noticeKey: `${batchId}_${index}`, workerId: 'w', outcome, batchId })));
}

const lines = async () => (await registry.getSingleMetricAsString('notice_ledger_replay_outcomes')).split('\n').filter((line) => !line.startsWith('#'));

describe('replay outcomes by batch', () => {
  it('labels each running batch with sent, suppressed as duplicate and failed; a finished batch has no label', async () => {
    const running = await addReplay('rpl_running_1', 'running');
    await addReplay('rpl_done_1', 'completed');
    await attempts('rpl_running_1', ['sent', 'sent', 'suppressed_duplicate', 'discarded', 'permanent_failure', 'deferred']);
    await attempts('rpl_done_1', ['sent']);

    await refreshReplayGauges(t.db);
    expect((await lines()).sort()).toEqual(
      [
        'notice_ledger_replay_outcomes{batch_id="rpl_running_1",outcome="sent"} 2',
        'notice_ledger_replay_outcomes{batch_id="rpl_running_1",outcome="suppressed_duplicate"} 1',
        'notice_ledger_replay_outcomes{batch_id="rpl_running_1",outcome="failed"} 1',
      ].sort(),
    );
    // The replay page shows the same split: 2 suppressed, 1 of them as duplicate.
    expect((await getReplayView(t.db, { id: running }))?.progress).toMatchObject({ sent: 2, suppressed: 2, duplicates: 1, failed: 1 });

    await t.db.update(replays).set({ state: 'completed' }).where(eq(replays.id, running));
    await refreshReplayGauges(t.db);
    expect(await lines()).toEqual([]);
  });
});
