import { retryFailureContract } from '@/lib/api/console/failures';
import { retryFailedNotice } from '@/lib/console/failures';
import { consoleRoute } from '@/lib/http/console-route';
import { getWakeupPublisher } from '@/lib/queue';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(retryFailureContract, async ({ db, input, actor }) =>
  retryFailedNotice(db, { ...input, actor, publisher: getWakeupPublisher }),
);
