import { cancelResponse, parseJsonBody, parseValue, producerRoute } from '@/lib/api/producer';
import { cancelParams, cancelReminder, cancelRequest } from '@/lib/jobs/schedule';

export const dynamic = 'force-dynamic';

export const POST = producerRoute(async ({ db, request, actor, params }) => {
  const path = parseValue(params, cancelParams);
  if (!path.ok) return path.response;
  const body = await parseJsonBody(request, cancelRequest, { optional: true });
  if (!body.ok) return body.response;
  const result = await cancelReminder({ db, id: path.data.id, actor, reason: body.data.reason ?? 'cancelled by producer', now: new Date() });
  return cancelResponse(result);
});
