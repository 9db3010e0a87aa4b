import { asc, eq } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { deliveryAttempts, type AttemptRow } from '@/db/schema';
import type { AttemptOutcome } from '@/db/schema/states';

/** The compact attempt log: who, when, outcome, why. Never bodies or codes. */
export type AttemptRecord = {
  jobId: string | null;
  noticeKey: string;
  workerId: string;
  startedAt: Date;
  outcome: AttemptOutcome;
  detail?: string | null;
  errorClass?: string | null;
  queueMessageId?: string | null;
  batchId?: string | null;
  correlationId?: string | null;
  claimToCommitMs?: number | null;
  mode: 'shadow' | 'enforce';
};

export async function recordAttempt(db: DbOrTx, attempt: AttemptRecord): Promise<void> {
  await db.insert(deliveryAttempts).values({
    jobId: attempt.jobId,
    noticeKey: attempt.noticeKey,
    workerId: attempt.workerId,
    startedAt: attempt.startedAt,
    outcome: attempt.outcome,
    detail: attempt.detail ?? null,
    errorClass: attempt.errorClass ?? null,
    queueMessageId: attempt.queueMessageId ?? null,
    batchId: attempt.batchId ?? null,
    correlationId: attempt.correlationId ?? null,
    claimToCommitMs: attempt.claimToCommitMs ?? null,
    mode: attempt.mode,
  });
}

export async function listAttemptsForJob(db: DbOrTx, { jobId }: { jobId: string }): Promise<AttemptRow[]> {
  return db.select().from(deliveryAttempts).where(eq(deliveryAttempts.jobId, jobId)).orderBy(asc(deliveryAttempts.id));
}
