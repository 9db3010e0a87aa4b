import { and, eq, inArray, isNotNull, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { reminderJobs } from '@/db/schema';

/**
 * A required SMS refused for good falls back to email (lib/jobs/sms-fallback.ts): the job, still
 * the same notice, now goes by `email`, is pending again at once and records the refusal's code.
 * Conditional on the job still being an unsent SMS with an email address to go to.
 */
export async function moveJobToEmail(
  db: DbOrTx,
  { jobId, refusedCode, errorClass, nextAttemptAt }: { jobId: string; refusedCode: string; errorClass: string; nextAttemptAt: Date },
): Promise<boolean> {
  const rows = await db
    .update(reminderJobs)
    .set({
      channel: 'email',
      smsRefusedCode: refusedCode,
      state: 'pending',
      attempts: sql`${reminderJobs.attempts} + 1`,
      nextAttemptAt,
      lastErrorClass: errorClass,
      updatedAt: sql`now()`,
    })
    .where(
      and(
        eq(reminderJobs.id, jobId),
        eq(reminderJobs.channel, 'sms'),
        isNotNull(reminderJobs.recipientEmail),
        inArray(reminderJobs.state, ['pending', 'claimed']),
      ),
    )
    .returning({ id: reminderJobs.id });
  return rows.length > 0;
}
