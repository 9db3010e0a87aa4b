import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';

export type ShadowDuplicateCount = { noticeType: string; sent: number; wouldSuppress: number };

/**
 * Shadow mode's own records since `from`, by notice type: notices it sent (attempts `sent`, mode
 * shadow) and the claims it found taken and sent anyway (`would_suppress`, the duplicates enforce
 * would have stopped). A range over delivery_attempts_started_idx.
 */
export async function countShadowDuplicates(db: DbOrTx, { from }: { from: Date }): Promise<ShadowDuplicateCount[]> {
  const result = await db.execute<{ notice_type: string; sent: number; would_suppress: number }>(sql`
    select j.notice_type,
           count(*) filter (where a.outcome = 'sent')::int as sent,
           count(*) filter (where a.outcome = 'would_suppress')::int as would_suppress
    from delivery_attempts a
    join reminder_jobs j on j.id = a.job_id
    where a.started_at >= ${from} and a.mode = 'shadow' and a.outcome in ('sent', 'would_suppress')
    group by 1
    order by 1`);
  return result.rows.map((row) => ({ noticeType: row.notice_type, sent: row.sent, wouldSuppress: row.would_suppress }));
}
