import { listWebhookDeliveriesContract } from '@/lib/api/console/webhooks';
import { loadDeliveryLog } from '@/lib/console/webhooks';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(listWebhookDeliveriesContract, async ({ db, input }) => ok(await loadDeliveryLog(db, input)));
