import { testWebhookEndpointContract } from '@/lib/api/console/webhooks';
import { consoleRoute } from '@/lib/http/console-route';
import { sendTestEvent } from '@/lib/webhooks/manage';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(testWebhookEndpointContract, async ({ db, input, actor }) =>
  sendTestEvent(db, { id: input.id, actor, reason: 'test send from the console' }),
);
