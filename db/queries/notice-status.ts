import { and, asc, desc, eq, gte, sql, type SQL } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { reminderJobs } from '@/db/schema/jobs';
import type { JobState } from '@/db/schema/states';

/**
 * The producer's notice status reads (lib/notices/status.ts). Every filter goes through an index:
 * the notice key and id (unique), (notice_type, identity, revision), lower(recipient_email),
 * recipient_phone; pages are a keyset on (created_at, id). No index here mentions a column the
 * send path updates, so the worker's updates stay HOT.
 */

export type NoticeFilter = {
  type?: string;
  identity?: Record<string, string>;
  revision?: number;
  recipient?: { email: string } | { phone: string };
  state?: JobState;
  since?: Date;
  /** The id of the previous page's last notice: the page continues after its (created_at, id), read at full precision. */
  afterId?: string;
  limit: number;
};

export type NoticeRef = { id: string; noticeKey: string; createdAt: Date };

const ref = { id: reminderJobs.id, noticeKey: reminderJobs.noticeKey, createdAt: reminderJobs.createdAt };

export async function findNoticeRef(db: DbOrTx, { id, noticeKey }: { id?: string; noticeKey?: string }): Promise<NoticeRef | null> {
  const where = id ? eq(reminderJobs.id, id) : noticeKey ? eq(reminderJobs.noticeKey, noticeKey) : null;
  if (!where) return null;
  const [row] = await db.select(ref).from(reminderJobs).where(where).limit(1);
  return row ?? null;
}

/** The notice for a business identity: the given revision, or the latest one scheduled. */
export async function findNoticeByIdentity(
  db: DbOrTx,
  { type, identity, revision }: { type: string; identity: Record<string, string>; revision?: number },
): Promise<NoticeRef | null> {
  const [row] = await db
    .select(ref)
    .from(reminderJobs)
    .where(
      and(
        eq(reminderJobs.noticeType, type),
        sql`${reminderJobs.identity} = ${JSON.stringify(identity)}::jsonb`,
        revision === undefined ? undefined : eq(reminderJobs.revision, revision),
      ),
    )
    .orderBy(desc(reminderJobs.revision))
    .limit(1);
  return row ?? null;
}

export async function listNoticeRefs(db: DbOrTx, filter: NoticeFilter): Promise<NoticeRef[]> {
  const conditions: (SQL | undefined)[] = [];
  if (filter.type) conditions.push(eq(reminderJobs.noticeType, filter.type));
  if (filter.identity) conditions.push(sql`${reminderJobs.identity} = ${JSON.stringify(filter.identity)}::jsonb`);
  if (filter.revision !== undefined) conditions.push(eq(reminderJobs.revision, filter.revision));
  if (filter.recipient && 'email' in filter.recipient) conditions.push(sql`lower(${reminderJobs.recipientEmail}) = ${filter.recipient.email.toLowerCase()}`);
  if (filter.recipient && 'phone' in filter.recipient) conditions.push(eq(reminderJobs.recipientPhone, filter.recipient.phone));
  if (filter.state) conditions.push(eq(reminderJobs.state, filter.state));
  if (filter.since) conditions.push(gte(reminderJobs.createdAt, filter.since));
  if (filter.afterId)
    conditions.push(sql`(${reminderJobs.createdAt}, ${reminderJobs.id}) > (select c.created_at, c.id from reminder_jobs c where c.id = ${filter.afterId})`);
  return db
    .select(ref)
    .from(reminderJobs)
    .where(and(...conditions))
    .orderBy(asc(reminderJobs.createdAt), asc(reminderJobs.id))
    .limit(filter.limit);
}
