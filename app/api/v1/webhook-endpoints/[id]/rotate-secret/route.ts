import { rotateWebhookSecretRoute } from '@/lib/api/webhook-endpoints';
import { producerRoute } from '@/lib/http/producer-route';
import { manageSettings, rotateEndpointSecret } from '@/lib/webhooks/manage';

export const dynamic = 'force-dynamic';

/** A new secret, in this answer only; the previous one signs beside it until WEBHOOK_ROTATION_OVERLAP from now. */
export const POST = producerRoute(rotateWebhookSecretRoute, async ({ db, params, body, actor }) => {
  const rotated = await rotateEndpointSecret(db, { id: params.id, actor, reason: body.reason }, manageSettings());
  return rotated.ok ? { ok: true, data: { status: 200, body: rotated.data } } : rotated;
});
