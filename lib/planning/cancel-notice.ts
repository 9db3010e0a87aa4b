import type { Db } from '@/db/client';
import { insertAuditEntries, type AuditEntry } from '@/db/queries/audit';
import { cancelPendingJob, lockJobById } from '@/db/queries/scheduling';
import type { JobRow } from '@/db/schema/jobs';

/**
 * Cancelling a notice: a producer's (POST /api/v1/reminders/{id}/cancel by job id,
 * POST /api/v1/notices/cancel by identity: lib/notices/answers.ts) and support's from the
 * console (lib/console/recipients.ts) are this one cancel, and a new revision cancels the older
 * revisions' pending jobs with the same audit entry (lib/planning/receive-event.ts). Only a
 * pending job is cancelled; anything past pending is history and stays as it is.
 */

export type CancelResult = { kind: 'cancelled'; job: JobRow } | { kind: 'not_found' } | { kind: 'conflict'; job: JobRow; message: string };

/** What a cancel writes to the audit log: `reminder.cancel` on the job, its state before and after. */
export function cancelAuditEntry({ actor, reason, before, after }: { actor: string; reason: string; before: JobRow; after: JobRow }): AuditEntry {
  return {
    actor,
    action: 'reminder.cancel',
    targetType: 'reminder_job',
    targetId: after.id,
    reason,
    before: { state: before.state },
    after: { state: after.state },
  };
}

/** Cancels a pending job. Anything past pending is history and stays as it is. */
export async function cancelReminder({ db, id, actor, reason, now }: { db: Db; id: string; actor: string; reason: string; now: Date }): Promise<CancelResult> {
  return db.transaction(async (tx) => {
    const job = await lockJobById(tx, { id });
    if (!job) return { kind: 'not_found' };
    if (job.state === 'claimed') {
      // Claimed: a worker owns it and its send may already have left. Say so, rather than "too late".
      return {
        kind: 'conflict',
        job,
        message: 'job is claimed: a worker is sending it and the notice may already be on its way; only a pending job can be cancelled',
      };
    }
    if (job.state !== 'pending') return { kind: 'conflict', job, message: `job is ${job.state}; only a pending job can be cancelled` };
    const cancelled = await cancelPendingJob(tx, { id, now });
    if (!cancelled) return { kind: 'conflict', job, message: 'job left pending while being cancelled' };
    await insertAuditEntries(tx, { entries: [cancelAuditEntry({ actor, reason, before: job, after: cancelled })] });
    return { kind: 'cancelled', job: cancelled };
  });
}

/** A producer's cancel, by job id or by the job its identity names: the reason it gave, else "cancelled by producer". */
export function cancelForProducer(db: Db, { id, actor, reason }: { id: string; actor: string; reason: string | undefined }): Promise<CancelResult> {
  return cancelReminder({ db, id, actor, reason: reason ?? 'cancelled by producer', now: new Date() });
}
