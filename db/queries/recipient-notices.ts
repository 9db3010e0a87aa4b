import { and, asc, eq, inArray, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { reminderJobs, type JobRow } from '@/db/schema';

/** A recipient's notices not yet settled (pending, or claimed by a worker), soonest first, bounded. */
export async function listOpenNoticesFor(db: DbOrTx, { email, limit = 50 }: { email: string; limit?: number }): Promise<JobRow[]> {
  return db
    .select()
    .from(reminderJobs)
    .where(and(eq(sql`lower(${reminderJobs.recipientEmail})`, email.trim().toLowerCase()), inArray(reminderJobs.state, ['pending', 'claimed'])))
    .orderBy(asc(reminderJobs.dueAt))
    .limit(limit);
}
