import { getWebhookEndpointRoute, updateWebhookEndpointRoute } from '@/lib/api/webhook-endpoints';
import { producerRoute } from '@/lib/http/producer-route';
import { getWebhookEndpoint, manageSettings, updateWebhookEndpoint } from '@/lib/webhooks/manage';

export const dynamic = 'force-dynamic';

export const GET = producerRoute(getWebhookEndpointRoute, async ({ db, params }) => {
  const found = await getWebhookEndpoint(db, params.id);
  return found.ok ? { ok: true, data: { status: 200, body: found.data } } : found;
});

/** URL, description, event types, enabled (false disables; true enables and clears the failing state). */
export const PATCH = producerRoute(updateWebhookEndpointRoute, async ({ db, params, body, actor }) => {
  const updated = await updateWebhookEndpoint(db, { id: params.id, ...body, actor }, manageSettings());
  return updated.ok ? { ok: true, data: { status: 200, body: updated.data } } : updated;
});
