import { createWebhookEndpointRoute, listWebhookEndpointsRoute } from '@/lib/api/webhook-endpoints';
import { producerRoute } from '@/lib/http/producer-route';
import { createEndpoint, listWebhookEndpoints, manageSettings } from '@/lib/webhooks/manage';

export const dynamic = 'force-dynamic';

/** The webhook endpoints (scope webhooks:manage); never a secret. */
export const GET = producerRoute(listWebhookEndpointsRoute, async ({ db }) => ({
  ok: true,
  data: { status: 200, body: { endpoints: await listWebhookEndpoints(db) } },
}));

/** A new endpoint: the URL rules at save (422), the `whsec_` secret in this answer only. */
export const POST = producerRoute(createWebhookEndpointRoute, async ({ db, body, actor }) => {
  const created = await createEndpoint(db, { ...body, actor }, manageSettings());
  return created.ok ? { ok: true, data: { status: 201, body: created.data } } : created;
});
