import { eq, sql } from 'drizzle-orm';
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
    | 'recipientPhone'
    | 'channel'
    | 'anchorAt'
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
        recipientPhone: reminderJobs.recipientPhone,
        channel: reminderJobs.channel,
        anchorAt: reminderJobs.anchorAt,
        dueAt: reminderJobs.dueAt,
        windowEarliest: reminderJobs.windowEarliest,
        deadlineAt: reminderJobs.deadlineAt,
        category: reminderJobs.category,
        payload: reminderJobs.payload,
        state: reminderJobs.state,
      },
      eventAnchorAt: businessEvents.anchorAt,
      eventRecipient: businessEvents.recipient,
      oneTimeCode: noticeLedger.oneTimeCode,
    })
    .from(reminderJobs)
    .leftJoin(businessEvents, eq(businessEvents.id, reminderJobs.eventId))
    .leftJoin(noticeLedger, eq(noticeLedger.noticeKey, reminderJobs.noticeKey))
    .where(eq(reminderJobs.noticeKey, noticeKey))
    .limit(1);
  if (!row) return null;
  // The anchor the job carries (the producer's anchorAt), else its event's: the one the link was signed with.
  return {
    job: row.job,
    anchorAt: row.job.anchorAt ?? row.eventAnchorAt ?? null,
    eventRecipient: row.eventRecipient ?? null,
    oneTimeCode: row.oneTimeCode ?? null,
  };
}

/**
 * The keys of the notices whose key starts with `prefix` (a compact link's 24 hex), at most two:
 * a range on the unique index of reminder_jobs.notice_key (`[prefix, prefix + 'g')` holds every
 * lower-case hex key starting with it, in any collation), and the caller takes a unique match only.
 */
export async function findNoticeKeysByPrefix(db: DbOrTx, { prefix }: { prefix: string }): Promise<string[]> {
  if (!/^[0-9a-f]{1,64}$/.test(prefix)) return [];
  const rows = await db
    .select({ noticeKey: reminderJobs.noticeKey })
    .from(reminderJobs)
    .where(sql`${reminderJobs.noticeKey} >= ${prefix} and ${reminderJobs.noticeKey} < ${`${prefix}g`}`)
    .limit(2);
  return rows.map((row) => row.noticeKey);
}
