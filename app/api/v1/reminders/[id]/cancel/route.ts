import { cancelReminderRoute } from '@/lib/api/producer';
import { cancelAnswer } from '@/lib/planning/answers';
import { producerRoute } from '@/lib/http/producer-route';
import { cancelReminder } from '@/lib/jobs/schedule';

export const dynamic = 'force-dynamic';

export const POST = producerRoute(cancelReminderRoute, async ({ db, params, body, actor }) =>
  cancelAnswer(await cancelReminder({ db, id: params.id, actor, reason: body.reason ?? 'cancelled by producer', now: new Date() })),
);
