import { scheduleReminder } from '@/lib/api/producer';
import { scheduleAnswer } from '@/lib/planning/answers';
import { config } from '@/lib/config';
import { producerRoute } from '@/lib/http/producer-route';
import { scheduleNotice } from '@/lib/planning/schedule-notice';
import { getWakeupPublisher } from '@/lib/queue';
import { activeNoticeConfig } from '@/lib/windows/active';

export const dynamic = 'force-dynamic';

export const POST = producerRoute(scheduleReminder, async ({ db, body, actor }) => {
  const settings = config();
  const result = await scheduleNotice({
    db,
    publisher: await getWakeupPublisher(),
    request: body,
    actor,
    now: new Date(),
    secret: settings.NOTICE_KEY_SECRET,
    maxDelayMs: settings.MAX_DELAY,
    notices: activeNoticeConfig(),
  });
  return scheduleAnswer(result);
});
