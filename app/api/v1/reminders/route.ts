import { scheduleReminder } from '@/lib/api/producer';
import { scheduleAnswer } from '@/lib/planning/answers';
import { producerRoute } from '@/lib/http/producer-route';
import { processProducerSettings } from '@/lib/planning/producer-settings';
import { scheduleNotice } from '@/lib/planning/schedule-notice';

export const dynamic = 'force-dynamic';

export const POST = producerRoute(scheduleReminder, async ({ db, body, actor }) =>
  scheduleAnswer(await scheduleNotice({ db, request: body, actor, ...(await processProducerSettings()) })),
);
