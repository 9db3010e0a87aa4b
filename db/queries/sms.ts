import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { smsMessages, type SmsMessageRow } from '@/db/schema/sms';
import { smsStatusRank, type SmsStatus } from '@/db/schema/states';

export function isSmsStatus(status: string): status is SmsStatus {
  return Object.hasOwn(smsStatusRank, status);
}

/**
 * A status callback's status for its message, forward only: inserted the first time, then moved
 * only to a higher rank (queued → sent → delivered / undelivered / failed), so a late `sent`
 * after `delivered`, or a duplicate, changes nothing. A later callback may link a message first
 * seen unlinked. Returns whether the row changed.
 */
export async function advanceSmsStatus(
  db: DbOrTx,
  {
    messageSid,
    status,
    errorCode,
    correlationId,
    noticeKey,
  }: { messageSid: string; status: SmsStatus; errorCode: string | null; correlationId: string | null; noticeKey: string | null },
): Promise<boolean> {
  const rank = smsStatusRank[status];
  const rows = await db
    .insert(smsMessages)
    .values({ messageSid, status, statusRank: rank, errorCode, correlationId, noticeKey })
    .onConflictDoUpdate({
      target: smsMessages.messageSid,
      set: {
        status: sql`case when excluded.status_rank > ${smsMessages.statusRank} then excluded.status else ${smsMessages.status} end`,
        statusRank: sql`greatest(${smsMessages.statusRank}, excluded.status_rank)`,
        errorCode: sql`case when excluded.status_rank > ${smsMessages.statusRank} then excluded.error_code else ${smsMessages.errorCode} end`,
        correlationId: sql`coalesce(${smsMessages.correlationId}, excluded.correlation_id)`,
        noticeKey: sql`coalesce(${smsMessages.noticeKey}, excluded.notice_key)`,
        updatedAt: sql`now()`,
      },
      setWhere: sql`excluded.status_rank > ${smsMessages.statusRank} or (${smsMessages.noticeKey} is null and excluded.notice_key is not null)`,
    })
    .returning({ messageSid: smsMessages.messageSid });
  return rows.length > 0;
}

export async function getSmsMessage(db: DbOrTx, { messageSid }: { messageSid: string }): Promise<SmsMessageRow | null> {
  const rows = await db
    .select()
    .from(smsMessages)
    .where(sql`${smsMessages.messageSid} = ${messageSid}`);
  return rows[0] ?? null;
}
