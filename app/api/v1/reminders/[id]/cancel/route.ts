import { cancelResponse, parseJsonBody, producerRoute } from '@/lib/api/producer';
import { cancelReminder, cancelRequest } from '@/lib/jobs/schedule';

export const dynamic = 'force-dynamic';

export const POST = producerRoute(async ({ db, request, actor, params }) => {
  const body = await parseJsonBody(request, cancelRequest, { optional: true });
  if (!body.ok) return body.response;
  const result = await cancelReminder({ db, id: params.id ?? '', actor, reason: body.data.reason ?? 'cancelled by producer', now: new Date() });
  return cancelResponse(result);
});
