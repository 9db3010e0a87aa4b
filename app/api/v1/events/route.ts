import { postEventRoute } from '@/lib/api/producer';
import { eventAnswer } from '@/lib/planning/answers';
import { producerRoute } from '@/lib/http/producer-route';
import { processProducerSettings } from '@/lib/planning/producer-settings';
import { receiveEvent } from '@/lib/planning/receive-event';

export const dynamic = 'force-dynamic';

export const POST = producerRoute(postEventRoute, async ({ db, body, actor }) =>
  eventAnswer(await receiveEvent({ db, request: body, actor, ...(await processProducerSettings()) })),
);
