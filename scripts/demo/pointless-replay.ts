import type pg from 'pg';
import { HOUR, type JobSeed } from './story';

/**
 * Yesterday's morning window, all already delivered: the replay the manager should see is
 * pointless. Requested by the operator 40 minutes ago, waiting for a manager's decision.
 */
export async function insertPointlessReplay(
  client: pg.PoolClient,
  { jobs, now, operatorId }: { jobs: JobSeed[]; now: Date; operatorId: string | undefined },
): Promise<void> {
  const windowStart = new Date(now.getTime() - 30 * HOUR);
  const windowEnd = new Date(now.getTime() - 24 * HOUR);
  const inWindow = jobs.filter((job) => job.dueAt >= windowStart && job.dueAt < windowEnd);
  const sentInWindow = inWindow.filter((job) => job.state === 'sent').length;
  await client.query(
    `insert into replays (batch_id, state, filter, dry_run, requested_by, request_reason, total, requested_at)
     values ($1, 'requested', $2, $3, $4, $5, $6, $7)`,
    [
      `replay-${now.toISOString().slice(0, 10)}-demo`,
      { dueFrom: windowStart.toISOString(), dueTo: windowEnd.toISOString() },
      {
        total: inWindow.length,
        newKeys: inWindow.length - sentInWindow - inWindow.filter((j) => j.state === 'claimed').length,
        existing: { sent: sentInWindow },
      },
      operatorId,
      'Scheduler paused during the database failover yesterday morning; re-enqueue the window to be safe.',
      inWindow.length,
      new Date(now.getTime() - 40 * 60_000),
    ],
  );
  await client.query(
    `insert into audit_log (actor, action, target_type, target_id, reason, at)
     values ('operator@demo.local', 'replay.request', 'replay', $1, 'Scheduler paused during the database failover yesterday morning', $2)`,
    [`replay-${now.toISOString().slice(0, 10)}-demo`, new Date(now.getTime() - 40 * 60_000)],
  );
}
