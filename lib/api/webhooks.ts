import { z } from 'zod';
import { providerContract } from '@/lib/http/contract';
import { genericWebhookBody } from '@/lib/events/providers/generic';
import { postmarkRecord } from '@/lib/events/providers/postmark';
import { sendgridBody } from '@/lib/events/providers/sendgrid';
import { snsEnvelope } from '@/lib/events/sns';
import { twilioInboundMessage, twilioStatusCallback } from '@/lib/events/providers/twilio';
import { skipReasons } from '@/lib/events/types';

/**
 * The provider webhooks: each provider's documented payload as its parser reads it once the
 * request is authenticated, and the one summary every provider gets back. A provider reads only
 * the status (2xx: stop retrying); the summary is for the person reading the provider's log.
 */

export const webhookSummary = z.object({
  received: z.number().int(),
  stored: z.number().int(),
  duplicates: z.number().int(),
  confirmed: z.number().int(),
  skippedCount: z.number().int(),
  skipped: z.array(z.object({ index: z.number().int(), eventId: z.string().nullable(), reason: z.enum(skipReasons), detail: z.string() })),
  note: z.string().optional(),
});
export type WebhookSummary = z.infer<typeof webhookSummary>;

export const genericWebhook = providerContract({ path: '/api/webhooks/generic', provider: 'generic', input: genericWebhookBody, output: webhookSummary });
export const postmarkWebhook = providerContract({ path: '/api/webhooks/postmark', provider: 'postmark', input: postmarkRecord, output: webhookSummary });
export const sendgridWebhook = providerContract({ path: '/api/webhooks/sendgrid', provider: 'sendgrid', input: sendgridBody, output: webhookSummary });
export const sesWebhook = providerContract({ path: '/api/webhooks/ses', provider: 'ses', input: snsEnvelope, output: webhookSummary });

export const twilioWebhook = providerContract({ path: '/api/webhooks/twilio', provider: 'twilio', input: twilioStatusCallback, output: webhookSummary });
export const twilioInboundWebhook = providerContract({
  path: '/api/webhooks/twilio/inbound',
  provider: 'twilio_inbound',
  input: twilioInboundMessage,
  output: webhookSummary,
});

export const providerRoutes = [genericWebhook, postmarkWebhook, sendgridWebhook, sesWebhook, twilioWebhook, twilioInboundWebhook] as const;
