import { updateWebhookEndpointContract } from '@/lib/api/console/webhooks';
import { consoleRoute } from '@/lib/http/console-route';
import { manageSettings, updateWebhookEndpoint } from '@/lib/webhooks/manage';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(updateWebhookEndpointContract, async ({ db, input, actor }) =>
  updateWebhookEndpoint(db, { ...input, actor }, manageSettings()),
);
