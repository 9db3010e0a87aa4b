import { listCancellationRequests } from '@/db/queries/cancellation-requests';
import { listCancellationRequestsRoute } from '@/lib/api/producer';
import { cancellationRequestsAnswer, cursorAfterId } from '@/lib/planning/answers';
import { producerRoute } from '@/lib/http/producer-route';

export const dynamic = 'force-dynamic';

/** The customers' cancellation requests from the notices' links, for the producer to act on (README "For producers"). */
export const GET = producerRoute(listCancellationRequestsRoute, async ({ db, body }) => {
  const rows = await listCancellationRequests(db, { since: body.since ? new Date(body.since) : null, afterId: cursorAfterId(body.cursor), limit: body.limit });
  return cancellationRequestsAnswer(rows, { limit: body.limit, cursor: body.cursor });
});
