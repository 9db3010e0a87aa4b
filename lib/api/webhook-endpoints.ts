import { z } from 'zod';
import { producerContract } from '@/lib/http/contract';
import { webhookEventTypes, webhookTestEventType } from './webhook-events';
import { instant, text } from './fields';

/**
 * Webhook endpoint management (`/api/v1/webhook-endpoints`, scope `webhooks:manage`): where the
 * ledger's outbound events go (Standard Webhooks v1, ARCHITECTURE.md "Webhooks to producers").
 * The `whsec_` secret is in the answer to a create or a rotation and in no other answer.
 */

export const webhookEndpointUrl = text().trim().min(1).max(2_000);
export const webhookEventTypeList = z
  .array(z.enum(webhookEventTypes))
  .min(1, 'name at least one event type')
  .max(webhookEventTypes.length)
  .refine((types) => new Set(types).size === types.length, 'each event type once');
const description = text().trim().max(200).nullable();
const auditReason = text().trim().min(3, 'say why, in a few words').max(500);

export const webhookEndpointView = z.object({
  id: z.uuid(),
  url: z.string(),
  description: z.string().nullable(),
  eventTypes: z.array(z.string()),
  enabled: z.boolean(),
  /** The keys that sign (ids and overlap ends only; never a secret). */
  keys: z.array(z.object({ keyId: z.string(), createdAt: instant, expiresAt: instant.nullable() })),
  createdBy: z.string(),
  createdAt: instant,
  /** The first failed attempt of the current run of failures; null after a success. */
  failingSince: instant.nullable(),
  disabledAt: instant.nullable(),
  /** `gone` (the endpoint answered 410), `failing` (WEBHOOK_DISABLE_AFTER without a success), `manual`. */
  disabledReason: z.string().nullable(),
});
export type WebhookEndpointView = z.infer<typeof webhookEndpointView>;

export const createWebhookEndpointRequest = z.strictObject({
  url: webhookEndpointUrl,
  description: description.optional(),
  /** Absent: every event type. */
  eventTypes: webhookEventTypeList.optional(),
  reason: auditReason.optional(),
});

export const updateWebhookEndpointRequest = z
  .strictObject({
    url: webhookEndpointUrl.optional(),
    description: description.optional(),
    eventTypes: webhookEventTypeList.optional(),
    /** false disables the endpoint (nothing is delivered to it); true enables it again and clears its failing state. */
    enabled: z.boolean().optional(),
    reason: auditReason.optional(),
  })
  .refine((body) => body.url !== undefined || body.description !== undefined || body.eventTypes !== undefined || body.enabled !== undefined, {
    message: 'change at least one of url, description, eventTypes, enabled',
  });

export const rotateWebhookSecretRequest = z.strictObject({ reason: auditReason.optional() });
export const testWebhookEndpointRequest = z.strictObject({ reason: auditReason.optional() });

/** Shown once: store `secret` now; a GET never returns it. */
export const webhookEndpointWithSecret = z.object({ endpoint: webhookEndpointView, secret: z.string().regex(/^whsec_/) });
export const rotatedWebhookSecret = z.object({
  endpoint: webhookEndpointView,
  secret: z.string().regex(/^whsec_/),
  keyId: z.string(),
  /** Until then each delivery carries the previous secret's signature too. */
  previousKeysSignUntil: instant,
});
export const webhookTestSent = z.object({ webhookId: z.string(), type: z.literal(webhookTestEventType) });

const endpointId = z.object({ id: z.uuid('must be a webhook endpoint id') });

export const listWebhookEndpointsRoute = producerContract({
  method: 'GET',
  path: '/api/v1/webhook-endpoints',
  scope: 'webhooks:manage',
  params: z.object({}),
  body: z.object({}),
  bodyOptional: true,
  output: z.object({ endpoints: z.array(webhookEndpointView) }),
});

export const createWebhookEndpointRoute = producerContract({
  method: 'POST',
  path: '/api/v1/webhook-endpoints',
  scope: 'webhooks:manage',
  params: z.object({}),
  body: createWebhookEndpointRequest,
  output: webhookEndpointWithSecret,
});

export const getWebhookEndpointRoute = producerContract({
  method: 'GET',
  path: '/api/v1/webhook-endpoints/{id}',
  scope: 'webhooks:manage',
  params: endpointId,
  body: z.object({}),
  bodyOptional: true,
  output: webhookEndpointView,
});

export const updateWebhookEndpointRoute = producerContract({
  method: 'PATCH',
  path: '/api/v1/webhook-endpoints/{id}',
  scope: 'webhooks:manage',
  params: endpointId,
  body: updateWebhookEndpointRequest,
  output: webhookEndpointView,
});

export const rotateWebhookSecretRoute = producerContract({
  method: 'POST',
  path: '/api/v1/webhook-endpoints/{id}/rotate-secret',
  scope: 'webhooks:manage',
  params: endpointId,
  body: rotateWebhookSecretRequest,
  bodyOptional: true,
  output: rotatedWebhookSecret,
});

export const testWebhookEndpointRoute = producerContract({
  method: 'POST',
  path: '/api/v1/webhook-endpoints/{id}/test',
  scope: 'webhooks:manage',
  params: endpointId,
  body: testWebhookEndpointRequest,
  bodyOptional: true,
  output: webhookTestSent,
});

export const webhookEndpointRoutes = [
  listWebhookEndpointsRoute,
  createWebhookEndpointRoute,
  getWebhookEndpointRoute,
  updateWebhookEndpointRoute,
  rotateWebhookSecretRoute,
  testWebhookEndpointRoute,
] as const;
