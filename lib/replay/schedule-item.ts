import { enqueueNotice } from '@/lib/planning/enqueue-notice';
import { activeNoticeConfig } from '@/lib/windows/active';
import { parseNoticeFact, subjectOf } from '@/lib/windows/notice-fact';
import type { ScheduleItem } from './runner';

/**
 * An uploaded row becomes a job the way a producer's request does (enqueueNotice): idempotent
 * on the notice key, so a row whose notice already has a job wakes that job instead of making
 * a second one.
 */
export const scheduleUploadedItem: ScheduleItem = async (tx, { item, batchId, publisher, now }) => {
  if (!item.noticeType || !item.identity || item.revision === null || !item.recipientEmail || !item.dueAt || !item.deadlineAt) {
    throw new Error(`replay item ${item.noticeKey.slice(0, 12)} has no uploaded fact to schedule`);
  }
  // Validated at upload; parsed again because the row has been at rest since.
  const fact = parseNoticeFact({ type: item.noticeType, identity: item.identity, revision: item.revision });
  const type = activeNoticeConfig().config.noticeTypes[fact.type];
  const { job, created, published } = await enqueueNotice(
    tx,
    {
      key: item.noticeKey,
      type: fact.type,
      identity: fact.identity,
      revision: fact.revision,
      subjectId: subjectOf(fact),
      customerId: item.customerId,
      recipient: { email: item.recipientEmail, phone: item.recipientPhone, timeZone: item.recipientTimeZone, locale: item.recipientLocale },
      // Chosen at upload (lib/replay/upload.ts); items stored before the column existed went by email.
      channel: item.channel ?? 'email',
      category: type?.category ?? 'courtesy',
      anchorAt: item.anchorAt,
      dueAt: item.dueAt,
      deadlineAt: item.deadlineAt,
      evidenceRef: item.evidenceRef,
      source: `replay:${batchId}`,
      batchId,
      payload: item.payload ?? {},
      window: null,
      eventId: null,
    },
    publisher,
    { now },
  );
  return { jobId: job.id, created, published };
};
