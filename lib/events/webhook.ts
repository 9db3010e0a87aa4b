import type { DbOrTx } from '@/db/client';
import { publicBaseUrl, type Config } from '@/lib/config';
import { createLogger } from '@/lib/log';
import { webhookEventsSkipped, webhookRequestsRejected } from '@/lib/metrics/registry';
import { ingestEvents } from './ingest';
import { parseGenericWebhook } from './providers/generic';
import { parsePostmarkWebhook } from './providers/postmark';
import { parseSendgridWebhook } from './providers/sendgrid';
import { parseSesWebhook, type SubscriptionConfirmer } from './providers/ses';
import { parseTwilioInbound, parseTwilioStatusCallback } from './providers/twilio';
import { defaultSnsKeyResolver, type SnsKeyResolver } from './sns';
import type { WebhookProvider } from '@/lib/api/fields';
import type { ParsedWebhook } from './types';
import { enabledWebhookSources, snsTopicArnsOf, sourceOf, type WebhookSourceName } from './webhook-sources';
import type { WebhookSummary } from '@/lib/api/webhooks';
import type { Result } from '@/lib/http/refusal';
import { SpanKind, withSpan } from '@/lib/telemetry/tracing';

const log = createLogger('webhooks');
/** A SendGrid batch holds up to a few thousand events; 1 MiB is far above any provider's request. */
export const WEBHOOK_BODY_LIMIT = 1024 * 1024;
// A batch of 5000 malformed events would otherwise make a 5000-entry log line and response.
const MAX_SKIPPED_LISTED = 100;

export type WebhookSettings = {
  webhookSecret?: string;
  postmarkUser?: string;
  postmarkPassword?: string;
  sendgridPublicKey?: string;
  snsTopicArns: string[];
  snsKeyResolver: SnsKeyResolver;
  confirmSubscription?: SubscriptionConfirmer;
  twilioAuthToken?: string;
  /** PUBLIC_BASE_URL: the origin Twilio's signature covers (the URL it called). */
  publicBaseUrl?: string;
  /** WEBHOOK_PROVIDERS; unset (in-process tests): every provider. */
  enabledSources?: readonly WebhookSourceName[];
};

export function webhookSettingsFrom(config: Config): WebhookSettings {
  return {
    webhookSecret: config.WEBHOOK_SECRET,
    postmarkUser: config.POSTMARK_WEBHOOK_USER,
    postmarkPassword: config.POSTMARK_WEBHOOK_PASSWORD,
    sendgridPublicKey: config.SENDGRID_WEBHOOK_PUBLIC_KEY,
    snsTopicArns: snsTopicArnsOf(config.SNS_TOPIC_ARNS),
    enabledSources: enabledWebhookSources(config.WEBHOOK_PROVIDERS),
    snsKeyResolver: defaultSnsKeyResolver({ certDir: config.SNS_CERT_DIR }),
    twilioAuthToken: config.TWILIO_AUTH_TOKEN,
    publicBaseUrl: publicBaseUrl(config),
  };
}

async function parseFor({
  provider,
  headers,
  body,
  settings,
  now,
  pathAndQuery,
}: {
  provider: WebhookProvider;
  headers: Headers;
  body: Buffer;
  settings: WebhookSettings;
  now: Date;
  pathAndQuery: string;
}): Promise<ParsedWebhook> {
  const source = sourceOf(provider);
  if (settings.enabledSources && !settings.enabledSources.includes(source))
    return { ok: false, refusal: { kind: 'not_found', message: `the ${source} webhook is not enabled (WEBHOOK_PROVIDERS)` } };
  switch (provider) {
    case 'generic':
      return parseGenericWebhook({ headers: headers, body, secret: settings.webhookSecret, now });
    case 'postmark':
      return parsePostmarkWebhook({ headers: headers, body, user: settings.postmarkUser, password: settings.postmarkPassword });
    case 'sendgrid':
      return parseSendgridWebhook({ headers: headers, body, publicKey: settings.sendgridPublicKey, now });
    case 'twilio':
      return parseTwilioStatusCallback({ headers, body, pathAndQuery, authToken: settings.twilioAuthToken, publicBaseUrl: settings.publicBaseUrl ?? '', now });
    case 'twilio_inbound':
      return parseTwilioInbound({ headers, body, pathAndQuery, authToken: settings.twilioAuthToken, publicBaseUrl: settings.publicBaseUrl ?? '', now });
    case 'ses':
      return parseSesWebhook({
        body,
        resolveKey: settings.snsKeyResolver,
        allowedTopics: settings.snsTopicArns,
        confirmSubscription: settings.confirmSubscription,
        now,
      });
  }
}

/**
 * The whole of a provider webhook: size limit, authentication (signature / Basic credentials,
 * replay window), schema, then idempotent storage and reconciliation. A request that fails any
 * check gets a 4xx (503 when the provider is not configured, so the provider retries once it
 * is) and stores nothing. Inside an authentic batch a malformed event is skipped, not the
 * batch: its siblings are stored, the answer is 200 (a retry would carry the same event) and
 * the response, a warning and `notice_ledger_webhook_events_skipped_total` name it by index and id.
 * Its span, `webhook.receive`, carries the provider and the refusal's kind or the counts received and skipped.
 */
export function receiveWebhook({
  provider,
  headers,
  body,
  db,
  settings,
  now = new Date(),
  pathAndQuery = '/',
}: {
  provider: WebhookProvider;
  headers: Headers;
  body: Buffer;
  db: DbOrTx;
  settings: WebhookSettings;
  now?: Date;
  /** The path and query the request arrived on: Twilio's signature covers them. */
  pathAndQuery?: string;
}): Promise<Result<WebhookSummary>> {
  return withSpan(
    'webhook.receive',
    { 'webhook.provider': provider },
    async (span) => {
      const parsed = await parseFor({ provider, headers, body, settings, now, pathAndQuery });
      if (!parsed.ok) {
        log.warn({ provider, refused: parsed.refusal.kind, error: parsed.refusal.message }, 'webhook rejected');
        webhookRequestsRejected.inc({ provider, reason: parsed.refusal.kind });
        span.setAttribute('webhook.refused', parsed.refusal.kind);
        return parsed;
      }
      const summary = await ingestEvents(db, { events: parsed.events });
      const received = summary.received + parsed.skipped.length;
      const skipped = parsed.skipped.slice(0, MAX_SKIPPED_LISTED);
      if (parsed.skipped.length > 0) {
        for (const event of parsed.skipped) webhookEventsSkipped.inc({ provider, reason: event.reason });
        log.warn(
          { provider, received, skippedCount: parsed.skipped.length, skipped },
          'webhook batch: malformed events skipped, not stored; the other events processed',
        );
      }
      log.info(
        {
          provider,
          received,
          stored: summary.stored,
          duplicates: summary.duplicates,
          linked: summary.linked,
          confirmed: summary.confirmed,
          suppressed: summary.suppressed.length,
          note: parsed.note,
        },
        'webhook processed',
      );
      span.setAttributes({ 'webhook.received': received, 'webhook.skipped': parsed.skipped.length });
      return {
        ok: true,
        data: {
          received,
          stored: summary.stored,
          duplicates: summary.duplicates,
          confirmed: summary.confirmed.length,
          skippedCount: parsed.skipped.length,
          skipped,
          ...(parsed.note ? { note: parsed.note } : {}),
        },
      };
    },
    { kind: SpanKind.SERVER },
  );
}
