import { producerRoute, parseJsonBody, scheduleResponse } from '@/lib/api/producer';
import { config } from '@/lib/config';
import { scheduleNotice, scheduleRequest } from '@/lib/jobs/schedule';
import { getWakeupPublisher } from '@/lib/queue';

export const dynamic = 'force-dynamic';

export const POST = producerRoute(async ({ db, request, actor }) => {
  const body = await parseJsonBody(request, scheduleRequest);
  if (!body.ok) return body.response;
  const settings = config();
  const result = await scheduleNotice({
    db,
    publisher: await getWakeupPublisher(),
    request: body.data,
    actor,
    now: new Date(),
    secret: settings.NOTICE_KEY_SECRET,
    maxDelayMs: settings.MAX_DELAY,
  });
  return scheduleResponse(result);
});
