import { insertAuditEntries, type AuditEntry } from '@/db/queries/audit';
import { findJobsByNoticeKeys } from '@/db/queries/scheduling';
import type { JobRow } from '@/db/schema/jobs';
import type { ScheduleRequest } from '@/lib/api/producer';
import { withSpan } from '@/lib/telemetry/tracing';
import { enqueueNotices } from './enqueue-notice';
import {
  answerExisting,
  prepareSchedule,
  refuseNewJob,
  scheduleAuditEntry,
  type PreparedSchedule,
  type ScheduleParams,
  type ScheduleResult,
} from './schedule-notice';

/**
 * A producer's batch of reminders (`POST /api/v1/reminders/batch`), each answered as
 * scheduleNotice would answer it on its own, one after the other: the checks that need no row
 * are the single request's (prepareSchedule); per chunk, one read of the keys already held, one
 * insert of the new jobs through enqueueNotices (the one insert path), one audit insert, in one
 * transaction. A key given twice answers its second item as a retry of the first would be
 * answered (200 with the same body, 409 naming what differs). A chunk that fails rolls back on
 * its own; the chunks before it stay, and the whole batch posted again answers them 200.
 */

/** Items per transaction: a 1 000-item batch is two. One insert of 500 rows binds ~14 000 parameters (PostgreSQL allows 65 535). */
export const REMINDER_CHUNK_SIZE = 500;

type Slot =
  | { kind: 'answered'; result: ScheduleResult }
  /** A new job for this key is being made by item `first` of the batch: answered against it once made. */
  | { kind: 'repeat'; prepared: PreparedSchedule; first: number }
  | { kind: 'create'; prepared: PreparedSchedule };

export async function scheduleNotices(
  params: Omit<ScheduleParams, 'request'> & { requests: ScheduleRequest[]; chunkSize?: number },
): Promise<ScheduleResult[]> {
  const { requests, chunkSize = REMINDER_CHUNK_SIZE } = params;
  return withSpan('notice.schedule_batch', { 'notice.batch.size': requests.length }, async () => {
    const results: ScheduleResult[] = [];
    // Every key this batch has answered for, with the job that holds it (made here or found).
    const held = new Map<string, JobRow>();
    for (let start = 0; start < requests.length; start += chunkSize) {
      results.push(...(await scheduleChunk(params, requests.slice(start, start + chunkSize), held)));
    }
    return results;
  });
}

async function scheduleChunk(
  { db, publisher, actor, now, maxDelayMs, secret, notices }: Omit<ScheduleParams, 'request'>,
  requests: ScheduleRequest[],
  held: Map<string, JobRow>,
): Promise<ScheduleResult[]> {
  const ready = requests.map((request) => prepareSchedule(request, { now, secret, notices }));
  const keys = [...new Set(ready.flatMap((item) => (item.ok && !held.has(item.prepared.key) ? [item.prepared.key] : [])))];
  return db.transaction(async (tx) => {
    for (const job of await findJobsByNoticeKeys(tx, { noticeKeys: keys })) held.set(job.noticeKey, job);
    // In item order, as single requests one after the other: a key held answers as a retry,
    // a key first seen here is refused for its times or made; a later item with it waits for the job.
    const making = new Map<string, number>();
    const slots: Slot[] = ready.map((item, index) => {
      if (!item.ok) return { kind: 'answered', result: item.result };
      const { prepared } = item;
      const job = held.get(prepared.key);
      if (job) return { kind: 'answered', result: answerExisting(job, prepared) };
      const first = making.get(prepared.key);
      if (first !== undefined) return { kind: 'repeat', prepared, first };
      const refused = refuseNewJob(prepared, { now, maxDelayMs });
      if (refused) return { kind: 'answered', result: refused };
      making.set(prepared.key, index);
      return { kind: 'create', prepared };
    });
    const creating = slots.flatMap((slot, index) => (slot.kind === 'create' ? [{ index, prepared: slot.prepared }] : []));
    const enqueued = await enqueueNotices(
      tx,
      creating.map((item) => item.prepared.notice),
      publisher,
      { now },
    );
    const audits: AuditEntry[] = [];
    const answers: (ScheduleResult | undefined)[] = slots.map((slot) => (slot.kind === 'answered' ? slot.result : undefined));
    for (const [position, { index, prepared }] of creating.entries()) {
      const made = enqueued[position];
      if (!made) throw new Error('enqueueNotices answered fewer jobs than notices');
      held.set(prepared.key, made.job);
      // Lost a race with a concurrent request for the same notice: answered as a retry, as a single request is.
      if (!made.created) {
        answers[index] = answerExisting(made.job, prepared);
        continue;
      }
      audits.push(scheduleAuditEntry(actor, prepared, made.job));
      answers[index] = { kind: 'created', job: made.job };
    }
    await insertAuditEntries(tx, { entries: audits });
    return slots.map((slot, index) => {
      if (slot.kind !== 'repeat') {
        const answer = answers[index];
        if (!answer) throw new Error(`item ${index} of the chunk has no answer`);
        return answer;
      }
      const job = held.get(slot.prepared.key);
      if (!job) throw new Error(`item ${index} repeats a key no job holds`);
      return answerExisting(job, slot.prepared);
    });
  });
}
