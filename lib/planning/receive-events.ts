import { lockEventIdentities } from '@/db/queries/business-events';
import type { EventRequest } from '@/lib/api/producer';
import { withSpan } from '@/lib/telemetry/tracing';
import { checkEvent, receiveCheckedEvent, type ReceiveEventParams, type ReceiveEventResult } from './receive-event';

/**
 * A producer's batch of business events (`POST /api/v1/events/batch`), each answered as
 * receiveEvent would answer it posted on its own, one after the other. The checks that need no
 * row are the single post's (checkEvent); per chunk, one transaction takes every identity's lock
 * (in lock-key order) and then receives the events in item order through the single post's own
 * statements (receiveCheckedEvent), so a repeat or a newer revision later in the batch sees the
 * earlier item's rows as a later post would. An event's plan, cancellations and notices are
 * several statements that depend on each other, so the saving here is the HTTP round trip and
 * the commit per event, not set-based SQL; reminders/batch is the set-based one.
 */

/** Events per transaction: each writes its event row, its plan and a job per planned notice, so chunks stay short. */
export const EVENT_CHUNK_SIZE = 100;

export async function receiveEvents(
  params: Omit<ReceiveEventParams, 'request'> & { requests: EventRequest[]; chunkSize?: number },
): Promise<ReceiveEventResult[]> {
  const { requests, chunkSize = EVENT_CHUNK_SIZE, ...shared } = params;
  return withSpan('event.receive_batch', { 'event.batch.size': requests.length }, async () => {
    const results: ReceiveEventResult[] = [];
    for (let start = 0; start < requests.length; start += chunkSize) {
      const checks = requests.slice(start, start + chunkSize).map((request) => checkEvent({ ...shared, request }));
      const chunk = await shared.db.transaction(async (tx) => {
        await lockEventIdentities(
          tx,
          checks.flatMap((check) => (check.ok ? [{ type: check.checked.params.request.type, identity: check.checked.identity }] : [])),
        );
        const answered: ReceiveEventResult[] = [];
        for (const check of checks) answered.push(check.ok ? await receiveCheckedEvent(tx, check.checked) : check.result);
        return answered;
      });
      results.push(...chunk);
    }
    return results;
  });
}
