import { eq, sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { transportStatus } from '@/db/schema/transports';

export type TransportStatusRow = typeof transportStatus.$inferSelect;

export type TransportDown = {
  transport: TransportStatusRow['transport'];
  reason: NonNullable<TransportStatusRow['reason']>;
  errorClass: string;
  code: number | null;
  workerId: string;
  at: Date;
};

/** A breaker opened or a probe failed: `down`, keeping `since` while it already was. */
export async function recordTransportDown(db: DbOrTx, { transport, reason, errorClass, code, workerId, at }: TransportDown): Promise<void> {
  await db
    .insert(transportStatus)
    .values({ transport, state: 'down', since: at, reason, errorClass, code, workerId, checkedAt: at })
    .onConflictDoUpdate({
      target: transportStatus.transport,
      set: {
        state: 'down',
        since: sql`case when ${transportStatus.state} = 'down' then ${transportStatus.since} else excluded.since end`,
        reason,
        errorClass,
        code,
        workerId,
        checkedAt: at,
      },
    });
}

/** A probe succeeded: `up` again. */
export async function recordTransportUp(
  db: DbOrTx,
  { transport, workerId, at }: { transport: TransportStatusRow['transport']; workerId: string; at: Date },
): Promise<void> {
  await db
    .insert(transportStatus)
    .values({ transport, state: 'up', since: at, reason: null, errorClass: null, code: null, workerId, checkedAt: at })
    .onConflictDoUpdate({
      target: transportStatus.transport,
      set: {
        state: 'up',
        since: sql`case when ${transportStatus.state} = 'up' then ${transportStatus.since} else excluded.since end`,
        reason: null,
        errorClass: null,
        code: null,
        workerId,
        checkedAt: at,
      },
    });
}

/** What the console's banner shows: every transport last seen down. */
export async function listTransportsDown(db: DbOrTx): Promise<TransportStatusRow[]> {
  return db.select().from(transportStatus).where(eq(transportStatus.state, 'down')).orderBy(transportStatus.transport);
}
