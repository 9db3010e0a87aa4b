import { randomBytes } from 'node:crypto';
import { insertJobUnlessExists } from '@/db/queries/scheduling';
import type { Notice } from '@/lib/planning/enqueue-notice';
import type { TestDatabase } from '@/testing/db';

/** A pending payment_recovery job row as a queue test needs it: when it is due, and when it was last woken. */
export async function makeQueueJob(t: TestDatabase, params: { nextAttemptAt: Date; wakeupPublishedAt: Date | null }): Promise<string> {
  const key = randomBytes(32).toString('hex');
  const { job } = await insertJobUnlessExists(t.db, {
    noticeKey: key,
    noticeType: 'payment_recovery',
    identity: { account_id: 'acct_1', reconciliation_id: 'rec_1', exception_id: key.slice(0, 12) },
    revision: 0,
    subjectId: 'acct_1',
    customerId: null,
    recipientEmail: 'billing@example.com',
    recipientTimeZone: 'UTC',
    dueAt: params.nextAttemptAt,
    deadlineAt: new Date(params.nextAttemptAt.getTime() + 86_400_000),
    evidenceRef: null,
    source: 'contract-test',
    batchId: null,
    payload: {},
    wakeupPublishedAt: params.wakeupPublishedAt,
  });
  return job.id;
}

/** A payment_recovery notice due at `dueAt`, as enqueueNotice takes it (a fresh key each call; deadline a day later unless given). */
export function noticeDueAt(dueAt: Date, { deadlineAt }: { deadlineAt?: Date } = {}): Notice {
  const key = randomBytes(32).toString('hex');
  return {
    key,
    type: 'payment_recovery',
    identity: { account_id: 'acct', reconciliation_id: 'rec', exception_id: key.slice(0, 12) },
    revision: 0,
    subjectId: 'acct',
    customerId: null,
    recipient: { email: 'billing@example.com', phone: null, timeZone: 'UTC', locale: null },
    channel: 'email',
    category: 'courtesy',
    anchorAt: null,
    dueAt,
    deadlineAt: deadlineAt ?? new Date(dueAt.getTime() + 86_400_000),
    evidenceRef: null,
    source: 'queue-test',
    batchId: null,
    payload: {},
    window: null,
    eventId: null,
  };
}
