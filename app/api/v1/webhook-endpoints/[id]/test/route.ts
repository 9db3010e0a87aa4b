import { testWebhookEndpointRoute } from '@/lib/api/webhook-endpoints';
import { producerRoute } from '@/lib/http/producer-route';
import { sendTestEvent } from '@/lib/webhooks/manage';

export const dynamic = 'force-dynamic';

/** A `webhook.test` event to this endpoint only, through the outbox (its attempts in the delivery log). */
export const POST = producerRoute(testWebhookEndpointRoute, async ({ db, params, body, actor }) => {
  const sent = await sendTestEvent(db, { id: params.id, actor, reason: body.reason });
  return sent.ok ? { ok: true, data: { status: 201, body: sent.data } } : sent;
});
