import { insertJobUnlessExists } from '@/db/queries/scheduling';
import { activeNoticeConfig } from '@/lib/windows/active';
import { parseNoticeFact, subjectOf } from '@/lib/windows/notice-fact';
import type { ScheduleItem } from './runner';

/**
 * An uploaded row becomes a job the way a producer's request does: idempotent on the notice
 * key, so a row whose notice already has a job wakes that job instead of making a second one.
 */
export const scheduleUploadedItem: ScheduleItem = async (tx, { item, batchId }) => {
  if (!item.noticeType || !item.identity || item.revision === null || !item.recipientEmail || !item.dueAt || !item.deadlineAt) {
    throw new Error(`replay item ${item.noticeKey.slice(0, 12)} has no uploaded fact to schedule`);
  }
  // Validated at upload; parsed again because the row has been at rest since.
  const fact = parseNoticeFact({ type: item.noticeType, identity: item.identity, revision: item.revision });
  const type = activeNoticeConfig().config.noticeTypes[fact.type];
  const { job } = await insertJobUnlessExists(tx, {
    noticeKey: item.noticeKey,
    noticeType: fact.type,
    identity: fact.identity,
    revision: fact.revision,
    subjectId: subjectOf(fact),
    customerId: item.customerId,
    recipientEmail: item.recipientEmail,
    recipientTimeZone: item.recipientTimeZone ?? 'UTC',
    recipientLocale: item.recipientLocale,
    anchorAt: item.anchorAt,
    // Chosen at upload (lib/replay/upload.ts); items stored before the column existed went by email.
    channel: item.channel ?? 'email',
    recipientPhone: item.recipientPhone,
    category: type?.category ?? 'courtesy',
    dueAt: item.dueAt,
    deadlineAt: item.deadlineAt,
    evidenceRef: item.evidenceRef,
    source: `replay:${batchId}`,
    batchId,
    payload: item.payload ?? {},
    wakeupPublishedAt: new Date(),
  });
  return job.id;
};
