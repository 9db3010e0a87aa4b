import { z } from 'zod';
import { consoleContract } from '@/lib/http/contract';
import { instant, text } from '@/lib/api/fields';
import {
  webhookEndpointUrl,
  webhookEndpointView,
  webhookEndpointWithSecret,
  webhookEventTypeList,
  rotatedWebhookSecret,
  webhookTestSent,
} from '@/lib/api/webhook-endpoints';
import { webhookEventTypes } from '@/lib/api/webhook-events';

/** The console's Webhooks page (admins manage; operators and managers read): the same service as /api/v1/webhook-endpoints. */

const changeReason = text().trim().min(3, 'say why, in a few words').max(500);

/** For the page's checkboxes (components read no lib/webhooks module). */
export const consoleWebhookEventTypes = webhookEventTypes;

export const consoleEndpointView = webhookEndpointView.extend({
  deliveries: z.object({ pending: z.number().int(), failed: z.number().int(), delivered: z.number().int() }),
});
export type ConsoleEndpointView = z.infer<typeof consoleEndpointView>;

export const listWebhookEndpointsContract = consoleContract({
  method: 'GET',
  path: '/api/console/webhook-endpoints',
  permission: 'webhooks.read',
  input: z.strictObject({}),
  output: z.array(consoleEndpointView),
});

export const createWebhookEndpointContract = consoleContract({
  method: 'POST',
  path: '/api/console/webhook-endpoints',
  permission: 'webhooks.manage',
  input: z.strictObject({ url: webhookEndpointUrl, description: text().trim().max(200).optional(), eventTypes: webhookEventTypeList, reason: changeReason }),
  output: webhookEndpointWithSecret,
  status: 201,
});

export const updateWebhookEndpointContract = consoleContract({
  method: 'POST',
  path: '/api/console/webhook-endpoints/update',
  permission: 'webhooks.manage',
  input: z.strictObject({
    id: z.uuid(),
    enabled: z.boolean().optional(),
    eventTypes: webhookEventTypeList.optional(),
    url: webhookEndpointUrl.optional(),
    reason: changeReason,
  }),
  output: webhookEndpointView,
});

export const rotateWebhookSecretContract = consoleContract({
  method: 'POST',
  path: '/api/console/webhook-endpoints/rotate',
  permission: 'webhooks.manage',
  input: z.strictObject({ id: z.uuid(), reason: changeReason }),
  output: rotatedWebhookSecret,
});

export const testWebhookEndpointContract = consoleContract({
  method: 'POST',
  path: '/api/console/webhook-endpoints/test',
  permission: 'webhooks.manage',
  input: z.strictObject({ id: z.uuid() }),
  output: webhookTestSent,
});

export const deliveryCursorPattern = /^\d{1,18}$/;

export const deliveryLogQuery = z.strictObject({
  endpoint: z.uuid().optional(),
  /** A notice's reminder job id. */
  notice: z.uuid().optional(),
  /** The `next` of a previous page. */
  before: z.string().regex(deliveryCursorPattern, 'must be the next cursor of a previous page').optional(),
  limit: z.coerce.number().int().min(1).max(200).default(50),
});

export const deliveryAttemptView = z.object({
  id: z.number().int(),
  eventId: z.number().int(),
  endpointId: z.uuid(),
  endpointUrl: z.string(),
  webhookId: z.string(),
  type: z.string(),
  jobId: z.string().nullable(),
  sequence: z.number().int(),
  attempt: z.number().int(),
  status: z.number().int().nullable(),
  /** The error class (timeout, address_refused, ECONNREFUSED, …); null when the endpoint answered. */
  error: z.string().nullable(),
  latencyMs: z.number().int(),
  at: instant,
  deliveryState: z.string(),
});
export type DeliveryAttemptView = z.infer<typeof deliveryAttemptView>;

export const listWebhookDeliveriesContract = consoleContract({
  method: 'GET',
  path: '/api/console/webhook-endpoints/deliveries',
  permission: 'webhooks.read',
  input: deliveryLogQuery,
  output: z.object({ attempts: z.array(deliveryAttemptView), next: z.string().nullable() }),
});

export const replayWebhookDeliveriesInput = z
  .strictObject({
    endpointId: z.uuid(),
    /** One delivery (the event's id in the log), or a range of creation times. */
    eventId: z.number().int().positive().optional(),
    from: instant.optional(),
    to: instant.optional(),
    /** Also the deliveries that succeeded (a consumer that lost its data); otherwise the failed ones only. */
    includeDelivered: z.boolean().default(false),
    reason: changeReason,
  })
  .refine((input) => input.eventId !== undefined || (input.from !== undefined && input.to !== undefined), {
    message: 'name one delivery (eventId) or a time range (from and to)',
  })
  .refine((input) => !input.from || !input.to || Date.parse(input.from) < Date.parse(input.to), { message: 'from must be before to', path: ['to'] });

export const replayWebhookDeliveriesContract = consoleContract({
  method: 'POST',
  path: '/api/console/webhook-endpoints/replay',
  permission: 'webhooks.manage',
  input: replayWebhookDeliveriesInput,
  output: z.object({ replayed: z.number().int() }),
});
