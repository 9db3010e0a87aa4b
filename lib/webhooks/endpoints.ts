import { randomUUID } from 'node:crypto';
import type { DbOrTx } from '@/db/client';
import { getEndpoint, insertEndpoint, replaceEndpointSecrets } from '@/db/queries/webhooks';
import type { SealedWebhookSecret, WebhookEndpointRow } from '@/db/schema';
import { webhookEventTypes, type WebhookEventType } from './events';
import { mintWebhookSecret, sealWebhookSecret, signingSecrets } from './secrets';
import { refreshWebhookSubscriptions } from './subscriptions';
import { checkWebhookUrl, resolveWebhookHost, type AllowList, type UrlProblem } from './url';

export type EndpointSettings = { production: boolean; allow: AllowList; noticeKeySecret: string };

/** An endpoint as shown: never a secret, only the key ids that sign and until when. */
export function endpointView(row: WebhookEndpointRow) {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    eventTypes: row.eventTypes,
    keys: row.secrets.map((s) => ({ keyId: s.keyId, createdAt: s.createdAt, expiresAt: s.expiresAt })),
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    failingSince: row.failingSince?.toISOString() ?? null,
    disabledAt: row.disabledAt?.toISOString() ?? null,
    disabledReason: row.disabledReason,
  };
}

function sealedKey({ endpointId, secret, noticeKeySecret }: { endpointId: string; secret: string; noticeKeySecret: string }): SealedWebhookSecret {
  const keyId = `key_${randomUUID().replaceAll('-', '').slice(0, 16)}`;
  return { keyId, sealed: sealWebhookSecret({ secret, endpointId, keyId, noticeKeySecret }), createdAt: new Date().toISOString(), expiresAt: null };
}

/** Creates an endpoint; the `whsec_` secret is returned this once and stored only sealed. */
export async function createWebhookEndpoint(
  db: DbOrTx,
  { url, description, eventTypes, createdBy }: { url: string; description: string | null; eventTypes: readonly WebhookEventType[]; createdBy: string },
  settings: EndpointSettings,
): Promise<{ ok: true; endpoint: ReturnType<typeof endpointView>; secret: string } | { ok: false; problem: UrlProblem }> {
  const problem = checkWebhookUrl(url, settings) ?? (await resolveWebhookHost(url, settings.allow));
  if (problem) return { ok: false, problem };
  const types = eventTypes.length > 0 ? [...new Set(eventTypes)] : [...webhookEventTypes];
  const secret = mintWebhookSecret();
  // The id is chosen here because the secret is sealed bound to it.
  const id = randomUUID();
  const row = await insertEndpoint(db, {
    id,
    url,
    description,
    eventTypes: types,
    secrets: [sealedKey({ endpointId: id, secret, noticeKeySecret: settings.noticeKeySecret })],
    createdBy,
  });
  refreshWebhookSubscriptions();
  return { ok: true, endpoint: endpointView(row), secret };
}

/**
 * A new secret that signs from now on; the keys signing before keep signing until `overlapMs`
 * from now, so during the overlap each delivery carries both signatures. Returned once.
 */
export async function rotateWebhookSecret(
  db: DbOrTx,
  { id, overlapMs, noticeKeySecret }: { id: string; overlapMs: number; noticeKeySecret: string },
): Promise<{ secret: string; keyId: string } | null> {
  const row = await getEndpoint(db, id);
  if (!row) return null;
  const now = new Date();
  const until = new Date(now.getTime() + overlapMs).toISOString();
  const kept = signingSecrets(row.secrets, now).map((s) => ({ ...s, expiresAt: s.expiresAt && s.expiresAt < until ? s.expiresAt : until }));
  const secret = mintWebhookSecret();
  const key = sealedKey({ endpointId: id, secret, noticeKeySecret });
  await replaceEndpointSecrets(db, { id, secrets: [key, ...kept] });
  return { secret, keyId: key.keyId };
}
