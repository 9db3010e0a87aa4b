import { and, asc, eq, gt, gte, lt, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { cancellationRequests, type CancellationRequestRow } from '@/db/schema/recipients';
import type { CancellationSource } from '@/db/schema/states';

export type NewCancellationRequest = {
  noticeKey: string;
  jobId: string;
  noticeType: string;
  identity: Record<string, string>;
  subjectId: string;
  customerId: string | null;
  source: CancellationSource;
  codeVerified: boolean;
};

/**
 * Records the customer's request once per notice: a second request (a double click, a reload,
 * the same link tomorrow) finds the first row and changes nothing. `created` tells them apart.
 */
export async function recordCancellationRequest(db: DbOrTx, request: NewCancellationRequest): Promise<{ created: boolean; row: CancellationRequestRow }> {
  const [inserted] = await db.insert(cancellationRequests).values(request).onConflictDoNothing({ target: cancellationRequests.noticeKey }).returning();
  if (inserted) return { created: true, row: inserted };
  const existing = await findCancellationRequest(db, { noticeKey: request.noticeKey });
  if (!existing) throw new Error('cancellation request conflicted on its notice key but is not there');
  return { created: false, row: existing };
}

export async function findCancellationRequest(db: DbOrTx, { noticeKey }: { noticeKey: string }): Promise<CancellationRequestRow | null> {
  const [row] = await db.select().from(cancellationRequests).where(eq(cancellationRequests.noticeKey, noticeKey)).limit(1);
  return row ?? null;
}

/**
 * Rows this recent are not listed yet. An id is taken when the insert starts and the row is
 * visible when it commits, so a reader could see id 8 before id 7 commits and move its cursor
 * past 7. Each request is one single-row statement (milliseconds between its start, which is
 * requested_at, and its commit), so a row older than this has committed or never will.
 */
export const LISTING_SETTLE_MS = 2_000;

/** The producer's listing: oldest first by id, from `since` on, `limit` rows after the cursor's id. */
export async function listCancellationRequests(
  db: DbOrTx,
  { since, afterId, limit }: { since: Date | null; afterId: number | null; limit: number },
): Promise<CancellationRequestRow[]> {
  return db
    .select()
    .from(cancellationRequests)
    .where(
      and(
        lt(cancellationRequests.requestedAt, sql`now() - make_interval(secs => ${LISTING_SETTLE_MS / 1000})`),
        since ? gte(cancellationRequests.requestedAt, since) : undefined,
        afterId !== null ? gt(cancellationRequests.id, afterId) : undefined,
      ),
    )
    .orderBy(asc(cancellationRequests.id))
    .limit(limit);
}
