import { postEventRoute } from '@/lib/api/producer';
import { eventAnswer } from '@/lib/planning/answers';
import { config } from '@/lib/config';
import { producerRoute } from '@/lib/http/producer-route';
import { receiveEvent } from '@/lib/planning/receive-event';
import { getWakeupPublisher } from '@/lib/queue';
import { activeNoticeConfig } from '@/lib/windows/active';

export const dynamic = 'force-dynamic';

export const POST = producerRoute(postEventRoute, async ({ db, body, actor }) => {
  const settings = config();
  const result = await receiveEvent({
    db,
    publisher: await getWakeupPublisher(),
    request: body,
    actor,
    now: new Date(),
    secret: settings.NOTICE_KEY_SECRET,
    maxDelayMs: settings.MAX_DELAY,
    notices: activeNoticeConfig(),
  });
  return eventAnswer(result);
});
