import { replayWebhookDeliveriesContract } from '@/lib/api/console/webhooks';
import { consoleRoute } from '@/lib/http/console-route';
import { replayEndpointDeliveries } from '@/lib/webhooks/manage';

export const dynamic = 'force-dynamic';

/** One delivery or a time range's, due again now; audited with who, why and how many. */
export const POST = consoleRoute(replayWebhookDeliveriesContract, async ({ db, input, actor }) => replayEndpointDeliveries(db, { ...input, actor }));
