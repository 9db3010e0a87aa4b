import { cancelReminderRoute } from '@/lib/api/producer';
import { cancelAnswer } from '@/lib/planning/answers';
import { producerRoute } from '@/lib/http/producer-route';
import { cancelForProducer } from '@/lib/planning/cancel-notice';

export const dynamic = 'force-dynamic';

export const POST = producerRoute(cancelReminderRoute, async ({ db, params, body, actor }) =>
  cancelAnswer(await cancelForProducer(db, { id: params.id, actor, reason: body.reason })),
);
