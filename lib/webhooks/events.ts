/** The outbound event types; the list lives with the contracts (lib/api/ is a leaf layer). */
export { webhookEventTypes, webhookTestEventType, type WebhookEventType } from '@/lib/api/webhook-events';
