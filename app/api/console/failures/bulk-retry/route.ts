import { bulkRetryContract } from '@/lib/api/console/failures';
import { config } from '@/lib/config';
import { bulkRetryFailures } from '@/lib/console/failures';
import { consoleRoute } from '@/lib/http/console-route';
import { getWakeupPublisher } from '@/lib/queue';
import { actorOf } from '@/lib/replay/transitions';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(bulkRetryContract, async ({ db, input, session }) =>
  bulkRetryFailures(db, { input, actor: actorOf(session), publisher: getWakeupPublisher, approvalAbove: config().BULK_RETRY_APPROVAL_ABOVE }),
);
