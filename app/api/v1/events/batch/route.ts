import { eventRequest, postEventsBatch } from '@/lib/api/producer';
import { eventAnswer } from '@/lib/planning/answers';
import { answerBatch } from '@/lib/planning/batch';
import { producerRoute } from '@/lib/http/producer-route';
import { processProducerSettings } from '@/lib/planning/producer-settings';
import { receiveEvents } from '@/lib/planning/receive-events';

export const dynamic = 'force-dynamic';

export const POST = producerRoute(postEventsBatch, async ({ db, body, actor }) => {
  const settings = await processProducerSettings();
  return answerBatch(body.items, {
    schema: eventRequest,
    run: (requests) => receiveEvents({ db, requests, actor, ...settings }),
    answer: eventAnswer,
  });
});
