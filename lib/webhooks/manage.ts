import { sql } from 'drizzle-orm';
import type { DbOrTx } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import { getEndpoint, insertTestEvent, listEndpoints, replayDeliveries, updateEndpoint } from '@/db/queries/webhooks';
import type { WebhookEndpointRow } from '@/db/schema';
import type { WebhookEndpointView } from '@/lib/api/webhook-endpoints';
import { config } from '@/lib/config';
import { ok, refuse, type Result } from '@/lib/http/refusal';
import { createWebhookEndpoint, rotateWebhookSecret, type EndpointSettings } from './endpoints';
import { webhookEventTypes, webhookTestEventType, type WebhookEventType } from './events';
import { refreshWebhookSubscriptions } from './subscriptions';
import { checkWebhookUrl, parseAllowList, resolveWebhookHost, type UrlProblem } from './url';

/**
 * Endpoint management, one implementation for the producer API (`/api/v1/webhook-endpoints`) and
 * the console's Webhooks page: every change audited with its actor and reason, URL rules applied
 * at save (a refused URL is a 422 naming the rule and changes nothing), the secret returned by
 * create and rotate only.
 */

export type ManageSettings = EndpointSettings & { overlapMs: number };

export function manageSettings(): ManageSettings {
  const settings = config();
  return {
    production: settings.NODE_ENV === 'production',
    allow: parseAllowList(settings.WEBHOOK_ALLOWED_PRIVATE),
    noticeKeySecret: settings.NOTICE_KEY_SECRET,
    overlapMs: settings.WEBHOOK_ROTATION_OVERLAP,
  };
}

export function webhookEndpointView(row: WebhookEndpointRow): WebhookEndpointView {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    eventTypes: row.eventTypes,
    enabled: row.disabledAt === null,
    keys: row.secrets.map((s) => ({ keyId: s.keyId, createdAt: s.createdAt, expiresAt: s.expiresAt })),
    createdBy: row.createdBy,
    createdAt: row.createdAt.toISOString(),
    failingSince: row.failingSince?.toISOString() ?? null,
    disabledAt: row.disabledAt?.toISOString() ?? null,
    disabledReason: row.disabledReason,
  };
}

function urlRefused(problem: UrlProblem) {
  return refuse('unprocessable', `url ${problem.message}`, { code: 'url_refused', details: [{ path: 'url', message: problem.message }] });
}

const notFound = () => refuse('not_found', 'no such webhook endpoint', { code: 'not_found' });

/** Which fields an audit row keeps: the view without the key list (ids only anyway). */
function audited(view: WebhookEndpointView) {
  return { url: view.url, description: view.description, eventTypes: view.eventTypes, enabled: view.enabled, disabledReason: view.disabledReason };
}

export async function listWebhookEndpoints(db: DbOrTx): Promise<WebhookEndpointView[]> {
  return (await listEndpoints(db)).map(webhookEndpointView);
}

export async function getWebhookEndpoint(db: DbOrTx, id: string): Promise<Result<WebhookEndpointView>> {
  const row = await getEndpoint(db, id);
  return row ? ok(webhookEndpointView(row)) : notFound();
}

export async function createEndpoint(
  db: DbOrTx,
  {
    url,
    description,
    eventTypes,
    actor,
    reason,
  }: { url: string; description?: string | null; eventTypes?: readonly WebhookEventType[]; actor: string; reason?: string },
  settings: ManageSettings,
): Promise<Result<{ endpoint: WebhookEndpointView; secret: string }>> {
  // DNS is asked before the transaction opens, so no connection is held while it answers.
  const problem = checkWebhookUrl(url, settings) ?? (await resolveWebhookHost(url, settings.allow));
  if (problem) return urlRefused(problem);
  const created = await db.transaction(async (tx) => {
    const made = await createWebhookEndpoint(
      tx,
      { url, description: description ?? null, eventTypes: eventTypes ?? [...webhookEventTypes], createdBy: actor },
      settings,
    );
    if (!made.ok) return made;
    const row = await getEndpoint(tx, made.endpoint.id);
    if (!row) throw new Error('the endpoint just made is missing');
    const view = webhookEndpointView(row);
    await insertAuditEntries(tx, {
      entries: [
        {
          actor,
          action: 'webhook_endpoint.create',
          targetType: 'webhook_endpoint',
          targetId: view.id,
          reason: reason ?? `created webhook endpoint ${view.url}`,
          after: { ...audited(view), keyId: view.keys[0]?.keyId ?? null },
        },
      ],
    });
    return { ok: true as const, endpoint: view, secret: made.secret };
  });
  refreshWebhookSubscriptions();
  if (!created.ok) return urlRefused(created.problem);
  return ok({ endpoint: created.endpoint, secret: created.secret });
}

export async function updateWebhookEndpoint(
  db: DbOrTx,
  {
    id,
    url,
    description,
    eventTypes,
    enabled,
    actor,
    reason,
  }: { id: string; url?: string; description?: string | null; eventTypes?: WebhookEventType[]; enabled?: boolean; actor: string; reason?: string },
  settings: ManageSettings,
): Promise<Result<WebhookEndpointView>> {
  if (url !== undefined) {
    const problem = checkWebhookUrl(url, settings) ?? (await resolveWebhookHost(url, settings.allow));
    if (problem) return urlRefused(problem);
  }
  const result = await db.transaction(async (tx) => {
    const before = await getEndpoint(tx, id);
    if (!before) return null;
    const after = await updateEndpoint(tx, { id, url, description, eventTypes: eventTypes ? [...new Set(eventTypes)] : undefined, enabled });
    if (!after) return null;
    const view = webhookEndpointView(after);
    await insertAuditEntries(tx, {
      entries: [
        {
          actor,
          action:
            enabled === false ? 'webhook_endpoint.disable' : enabled === true && before.disabledAt ? 'webhook_endpoint.enable' : 'webhook_endpoint.update',
          targetType: 'webhook_endpoint',
          targetId: id,
          reason: reason ?? `changed webhook endpoint ${view.url}`,
          before: audited(webhookEndpointView(before)),
          after: audited(view),
        },
      ],
    });
    return view;
  });
  refreshWebhookSubscriptions();
  return result ? ok(result) : notFound();
}

export async function rotateEndpointSecret(
  db: DbOrTx,
  { id, actor, reason }: { id: string; actor: string; reason?: string },
  settings: ManageSettings,
): Promise<Result<{ endpoint: WebhookEndpointView; secret: string; keyId: string; previousKeysSignUntil: string }>> {
  const result = await db.transaction(async (tx) => {
    // Locked, so two rotations at once each keep the other's key in the overlap.
    const locked = await tx.execute(sqlLock(id));
    if (locked.rows.length === 0) return null;
    const rotated = await rotateWebhookSecret(tx, { id, overlapMs: settings.overlapMs, noticeKeySecret: settings.noticeKeySecret });
    const row = rotated ? await getEndpoint(tx, id) : null;
    if (!rotated || !row) return null;
    const view = webhookEndpointView(row);
    // The overlap's end as stored on the previous keys (rotateWebhookSecret chose it).
    const until =
      view.keys.slice(1).reduce<string | null>((last, key) => (key.expiresAt && (!last || key.expiresAt > last) ? key.expiresAt : last), null) ??
      new Date().toISOString();
    await insertAuditEntries(tx, {
      entries: [
        {
          actor,
          action: 'webhook_endpoint.rotate_secret',
          targetType: 'webhook_endpoint',
          targetId: id,
          reason: reason ?? 'rotated the signing secret',
          after: { keyId: rotated.keyId, previousKeysSignUntil: until },
        },
      ],
    });
    return { endpoint: view, secret: rotated.secret, keyId: rotated.keyId, previousKeysSignUntil: until };
  });
  return result ? ok(result) : notFound();
}

function sqlLock(id: string) {
  return sql`select id from webhook_endpoints where id = ${id}::uuid for update`;
}

/** A `webhook.test` event to this endpoint alone, delivered by the dispatcher like any other (see the delivery log). */
export async function sendTestEvent(
  db: DbOrTx,
  { id, actor, reason }: { id: string; actor: string; reason?: string },
): Promise<Result<{ webhookId: string; type: typeof webhookTestEventType }>> {
  return db.transaction(async (tx) => {
    const row = await getEndpoint(tx, id);
    if (!row) return notFound();
    if (row.disabledAt) return refuse('conflict', 'the endpoint is disabled; enable it first', { code: 'endpoint_disabled' });
    const sent = await insertTestEvent(tx, {
      endpointId: id,
      type: webhookTestEventType,
      payload: { endpointId: id, message: 'A test event from notice-ledger; it reports nothing.' },
    });
    await insertAuditEntries(tx, {
      entries: [
        {
          actor,
          action: 'webhook_endpoint.test',
          targetType: 'webhook_endpoint',
          targetId: id,
          reason: reason ?? 'test send',
          after: { webhookId: sent.webhookId },
        },
      ],
    });
    return ok({ webhookId: sent.webhookId, type: webhookTestEventType });
  });
}

/** Replays one delivery or a time range's to an endpoint; audited with who, why and how many. */
export async function replayEndpointDeliveries(
  db: DbOrTx,
  {
    endpointId,
    eventId,
    from,
    to,
    includeDelivered,
    actor,
    reason,
  }: { endpointId: string; eventId?: number; from?: string; to?: string; includeDelivered: boolean; actor: string; reason: string },
): Promise<Result<{ replayed: number }>> {
  return db.transaction(async (tx) => {
    const row = await getEndpoint(tx, endpointId);
    if (!row) return notFound();
    if (row.disabledAt) return refuse('conflict', 'the endpoint is disabled; enable it before replaying to it', { code: 'endpoint_disabled' });
    const replayed = await replayDeliveries(tx, {
      endpointId,
      eventId,
      from: from ? new Date(from) : undefined,
      to: to ? new Date(to) : undefined,
      includeDelivered,
    });
    await insertAuditEntries(tx, {
      entries: [
        {
          actor,
          action: 'webhook_endpoint.replay',
          targetType: 'webhook_endpoint',
          targetId: endpointId,
          reason,
          after: { replayed, eventId: eventId ?? null, from: from ?? null, to: to ?? null, includeDelivered },
        },
      ],
    });
    return ok({ replayed });
  });
}
