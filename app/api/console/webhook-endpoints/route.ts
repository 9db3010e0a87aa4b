import { createWebhookEndpointContract, listWebhookEndpointsContract } from '@/lib/api/console/webhooks';
import { loadWebhookEndpoints } from '@/lib/console/webhooks';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';
import { createEndpoint, manageSettings } from '@/lib/webhooks/manage';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(listWebhookEndpointsContract, async ({ db }) => ok(await loadWebhookEndpoints(db)));

/** The secret is in this answer only: the page shows it once. */
export const POST = consoleRoute(createWebhookEndpointContract, async ({ db, input, actor }) => createEndpoint(db, { ...input, actor }, manageSettings()));
