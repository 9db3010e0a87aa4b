import { eq } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { businessEvents } from '@/db/schema/planning';
import { noticeLedger } from '@/db/schema/ledger';
import { reminderJobs, type JobRow } from '@/db/schema/jobs';

/**
 * What the recipient page reads for one notice, by its full key (a verified link's): the job,
 * the event that planned it (its anchor, the recipient's phone and locale), and the ledger row's
 * one-time code (compared by the caller, never shown).
 */
export type RecipientNotice = {
  job: Pick<
    JobRow,
    | 'id'
    | 'noticeKey'
    | 'noticeType'
    | 'identity'
    | 'subjectId'
    | 'customerId'
    | 'recipientEmail'
    | 'recipientTimeZone'
    | 'dueAt'
    | 'windowEarliest'
    | 'deadlineAt'
    | 'category'
    | 'payload'
    | 'state'
  >;
  anchorAt: Date | null;
  eventRecipient: Record<string, string> | null;
  oneTimeCode: string | null;
};

export async function findRecipientNotice(db: DbOrTx, { noticeKey }: { noticeKey: string }): Promise<RecipientNotice | null> {
  const [row] = await db
    .select({
      job: {
        id: reminderJobs.id,
        noticeKey: reminderJobs.noticeKey,
        noticeType: reminderJobs.noticeType,
        identity: reminderJobs.identity,
        subjectId: reminderJobs.subjectId,
        customerId: reminderJobs.customerId,
        recipientEmail: reminderJobs.recipientEmail,
        recipientTimeZone: reminderJobs.recipientTimeZone,
        dueAt: reminderJobs.dueAt,
        windowEarliest: reminderJobs.windowEarliest,
        deadlineAt: reminderJobs.deadlineAt,
        category: reminderJobs.category,
        payload: reminderJobs.payload,
        state: reminderJobs.state,
      },
      anchorAt: businessEvents.anchorAt,
      eventRecipient: businessEvents.recipient,
      oneTimeCode: noticeLedger.oneTimeCode,
    })
    .from(reminderJobs)
    .leftJoin(businessEvents, eq(businessEvents.id, reminderJobs.eventId))
    .leftJoin(noticeLedger, eq(noticeLedger.noticeKey, reminderJobs.noticeKey))
    .where(eq(reminderJobs.noticeKey, noticeKey))
    .limit(1);
  if (!row) return null;
  return { job: row.job, anchorAt: row.anchorAt ?? null, eventRecipient: row.eventRecipient ?? null, oneTimeCode: row.oneTimeCode ?? null };
}
