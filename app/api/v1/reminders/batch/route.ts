import { scheduleRemindersBatch, scheduleRequest } from '@/lib/api/producer';
import { scheduleAnswer } from '@/lib/planning/answers';
import { answerBatch } from '@/lib/planning/batch';
import { producerRoute } from '@/lib/http/producer-route';
import { processProducerSettings } from '@/lib/planning/producer-settings';
import { scheduleNotices } from '@/lib/planning/schedule-batch';

export const dynamic = 'force-dynamic';

export const POST = producerRoute(scheduleRemindersBatch, async ({ db, body, actor }) => {
  const settings = await processProducerSettings();
  return answerBatch(body.items, {
    schema: scheduleRequest,
    run: (requests) => scheduleNotices({ db, requests, actor, ...settings }),
    answer: scheduleAnswer,
  });
});
