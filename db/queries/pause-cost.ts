import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';

/** Unsent notices in a pause's scope, and those whose window closes within `horizonMs` (reminder_jobs_deadline index). */
export async function countPauseCost(
  db: DbOrTx,
  { noticeType, channel, horizonMs }: { noticeType: string | null; channel: string | null; horizonMs: number },
): Promise<{ inScope: number; closingWithinHorizon: number }> {
  const result = await db.execute<{ in_scope: number; closing: number }>(sql`
    select count(*)::int as in_scope,
           count(*) filter (where deadline_at <= now() + make_interval(secs => ${horizonMs / 1000}))::int as closing
    from reminder_jobs
    where state in ('pending', 'claimed') and deadline_at > now()
      and (${noticeType}::text is null or notice_type = ${noticeType})
      and (${channel}::text is null or channel = ${channel})`);
  const row = result.rows[0];
  return { inScope: row?.in_scope ?? 0, closingWithinHorizon: row?.closing ?? 0 };
}
