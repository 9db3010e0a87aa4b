import type { Tx } from '@/db/client';
import { insertJobsUnlessExist, markWakeupsPublished, type NewJob } from '@/db/queries/scheduling';
import type { JobRow } from '@/db/schema/jobs';
import type { Channel } from '@/db/schema/states';
import { isWithinHorizon } from '@/lib/queue/horizon';
import { wakeupFor } from '@/lib/queue/publish';
import type { QueueAdapter } from '@/lib/queue/types';
import { currentTraceparent } from '@/lib/telemetry/tracing';

/**
 * The one way a job row is made: the reminders route (scheduleNotice), the events planner
 * (receiveEvent) and replay (scheduleUploadedItem) each describe their notice and call
 * enqueueNotice (a producer's batch: enqueueNotices), which is the only caller of the insert
 * (test/one-insert-path.test.ts).
 */

/** The computed window a notice was planned in (deadlineAt is its latest instant). */
export type PlannedWindow = { earliest: Date; region: string | null; ruleIds: string[]; ruleSetVersion: string | null };

/**
 * Everything a job row is made of, already checked and resolved by the caller: the row's own
 * fields as the insert takes them (NewJob), and those enqueueNotice derives the columns from.
 */
export type Notice = Pick<
  NewJob,
  'identity' | 'revision' | 'subjectId' | 'customerId' | 'dueAt' | 'deadlineAt' | 'evidenceRef' | 'source' | 'batchId' | 'payload'
> & {
  key: string;
  type: string;
  /** timeZone null (a replay item stored before the column existed) is UTC, as a request without one is. */
  recipient: { email: string | null; phone: string | null; timeZone: string | null; locale: string | null };
  channel: Channel;
  category: 'required' | 'courtesy';
  anchorAt: Date | null;
  /** Null: no window was computed (no anchorAt), the job opens at dueAt. */
  window: PlannedWindow | null;
  /** The business event that planned it (POST /api/v1/events). */
  eventId: string | null;
};

export type WakeupPublisher = Pick<QueueAdapter, 'publishInTransaction' | 'horizonMs'>;

/**
 * `published` is false for a new job whose wake-up the queue did not record in the transaction:
 * due beyond the queue's horizon (lib/queue/horizon.ts), or a queue that cannot (RabbitMQ). Its
 * wake-up comes from the dispatcher once within the horizon, or from whoever enqueued it after
 * the commit.
 */
export type Enqueued = { job: JobRow; created: boolean; published: boolean };

/**
 * Inserts the notice's job unless its key already has one, and for a new job due within the
 * queue's horizon publishes its wake-up (due at dueAt) in `tx`: pg-boss records it there and the
 * row is marked woken for dueAt (as the dispatcher marks it); RabbitMQ records nothing (null).
 * A job due later is not published: the row stays unmarked and holds the delay. An existing job
 * is left as it is.
 */
export async function enqueueNotice(tx: Tx, notice: Notice, publisher: WakeupPublisher, { now }: { now: Date }): Promise<Enqueued> {
  const [enqueued] = await enqueueNotices(tx, [notice], publisher, { now });
  if (!enqueued) throw new Error('enqueueNotices answered nothing for one notice');
  return enqueued;
}

/**
 * enqueueNotice for many notices in one insert (a producer's batch), answered in the order
 * given; a key given twice makes one job, the later notice answered `created: false` as a
 * retry would be. Wake-ups are published one by one (the queue's interface), marked in one
 * statement.
 */
export async function enqueueNotices(tx: Tx, notices: Notice[], publisher: WakeupPublisher, { now }: { now: Date }): Promise<Enqueued[]> {
  const traceparent = currentTraceparent();
  const inserted = await insertJobsUnlessExist(
    tx,
    notices.map((notice) => rowOf(notice, traceparent)),
  );
  const marks: { id: string; at: Date }[] = [];
  const answers: Enqueued[] = [];
  for (const [index, { job, created }] of inserted.entries()) {
    const notice = notices[index];
    if (!notice) throw new Error('insertJobsUnlessExist answered more jobs than notices');
    let published = false;
    if (created && isWithinHorizon({ at: notice.dueAt, now, horizonMs: publisher.horizonMs })) {
      published = (await publisher.publishInTransaction(tx, wakeupFor(job), notice.dueAt)) !== null;
      if (published) marks.push({ id: job.id, at: notice.dueAt > now ? notice.dueAt : now });
    }
    answers.push({ job, created, published });
  }
  await markWakeupsPublished(tx, marks);
  return answers;
}

function rowOf(notice: Notice, traceparent: string | null): NewJob {
  return {
    noticeKey: notice.key,
    noticeType: notice.type,
    identity: notice.identity,
    revision: notice.revision,
    subjectId: notice.subjectId,
    customerId: notice.customerId,
    recipientEmail: notice.recipient.email,
    recipientTimeZone: notice.recipient.timeZone ?? 'UTC',
    recipientLocale: notice.recipient.locale,
    recipientPhone: notice.recipient.phone,
    anchorAt: notice.anchorAt,
    channel: notice.channel,
    category: notice.category,
    dueAt: notice.dueAt,
    deadlineAt: notice.deadlineAt,
    evidenceRef: notice.evidenceRef,
    source: notice.source,
    batchId: notice.batchId,
    payload: notice.payload,
    // Marked once the queue has recorded a wake-up; until then the dispatcher's.
    wakeupPublishedAt: null,
    traceparent,
    eventId: notice.eventId,
    ...(notice.window
      ? {
          windowEarliest: notice.window.earliest,
          region: notice.window.region,
          ruleIds: notice.window.ruleIds,
          ruleSetVersion: notice.window.ruleSetVersion,
        }
      : {}),
  };
}
