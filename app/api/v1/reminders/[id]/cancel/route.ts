import { z } from 'zod';
import { cancelResponse, parseJsonBody, parseValue, producerRoute } from '@/lib/api/producer';
import { cancelReminder, cancelRequest } from '@/lib/jobs/schedule';

export const dynamic = 'force-dynamic';

const cancelPath = z.strictObject({ id: z.guid('must be a reminder job id (a UUID, as POST /api/v1/reminders returned it)') });

export const POST = producerRoute(async ({ db, request, actor, params }) => {
  const path = parseValue(params, cancelPath);
  if (!path.ok) return path.response;
  const body = await parseJsonBody(request, cancelRequest, { optional: true });
  if (!body.ok) return body.response;
  const result = await cancelReminder({ db, id: path.data.id, actor, reason: body.data.reason ?? 'cancelled by producer', now: new Date() });
  return cancelResponse(result);
});
