import type { DbOrTx } from '../../db/client';
import type { Config } from '../config';
import { createLogger } from '../log';
import { webhookEventsSkipped } from '../metrics/registry';
import { ingestEvents } from './ingest';
import { parseGenericWebhook } from './providers/generic';
import { parsePostmarkWebhook } from './providers/postmark';
import { parseSendgridWebhook } from './providers/sendgrid';
import { parseSesWebhook, type SubscriptionConfirmer } from './providers/ses';
import { defaultSnsKeyResolver, type SnsKeyResolver } from './sns';
import type { ParsedWebhook, WebhookProvider } from './types';

const log = createLogger('webhooks');
const MAX_BODY_BYTES = 1024 * 1024;
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
};

export function webhookSettingsFrom(config: Config): WebhookSettings {
  return {
    webhookSecret: config.WEBHOOK_SECRET,
    postmarkUser: config.POSTMARK_WEBHOOK_USER,
    postmarkPassword: config.POSTMARK_WEBHOOK_PASSWORD,
    sendgridPublicKey: config.SENDGRID_WEBHOOK_PUBLIC_KEY,
    snsTopicArns: config.SNS_TOPIC_ARNS.split(',')
      .map((arn) => arn.trim())
      .filter(Boolean),
    snsKeyResolver: defaultSnsKeyResolver({ certDir: config.SNS_CERT_DIR }),
  };
}

function json(status: number, body: Record<string, unknown>, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

async function readBody(request: Request): Promise<Buffer | null> {
  const declared = Number(request.headers.get('content-length') ?? '0');
  if (declared > MAX_BODY_BYTES) return null;
  const body = Buffer.from(await request.arrayBuffer());
  return body.length > MAX_BODY_BYTES ? null : body;
}

async function parseFor({ provider, request, body, settings, now }: { provider: WebhookProvider; request: Request; body: Buffer; settings: WebhookSettings; now: Date }): Promise<ParsedWebhook> {
  switch (provider) {
    case 'generic':
      return parseGenericWebhook({ headers: request.headers, body, secret: settings.webhookSecret, now });
    case 'postmark':
      return parsePostmarkWebhook({ headers: request.headers, body, user: settings.postmarkUser, password: settings.postmarkPassword });
    case 'sendgrid':
      return parseSendgridWebhook({ headers: request.headers, body, publicKey: settings.sendgridPublicKey, now });
    case 'ses':
      return parseSesWebhook({ body, resolveKey: settings.snsKeyResolver, allowedTopics: settings.snsTopicArns, confirmSubscription: settings.confirmSubscription, now });
  }
}

/**
 * The whole of a provider webhook: size limit, authentication (signature / Basic credentials,
 * replay window), schema, then idempotent storage and reconciliation. A request that fails any
 * check gets a 4xx (503 when the provider is not configured, so the provider retries once it
 * is) and stores nothing. Inside an authentic batch a malformed event is skipped, not the
 * batch: its siblings are stored, the answer is 200 (a retry would carry the same event) and
 * the response, a warning and `notice_ledger_webhook_events_skipped_total` name it by index and id.
 */
export async function receiveWebhook({
  provider,
  request,
  db,
  settings,
  now = new Date(),
}: {
  provider: WebhookProvider;
  request: Request;
  db: DbOrTx;
  settings: WebhookSettings;
  now?: Date;
}): Promise<Response> {
  const body = await readBody(request);
  if (!body) return json(413, { error: 'body too large' });
  const parsed = await parseFor({ provider, request, body, settings, now });
  if (!parsed.ok) {
    log.warn({ provider, status: parsed.status, error: parsed.error }, 'webhook rejected');
    const challenge: Record<string, string> = provider === 'postmark' && parsed.status === 401 ? { 'www-authenticate': 'Basic realm="notice-ledger webhooks"' } : {};
    return json(parsed.status, { error: parsed.error }, challenge);
  }
  const summary = await ingestEvents(db, { events: parsed.events });
  const received = summary.received + parsed.skipped.length;
  const skipped = parsed.skipped.slice(0, MAX_SKIPPED_LISTED);
  if (parsed.skipped.length > 0) {
    for (const event of parsed.skipped) webhookEventsSkipped.inc({ provider, reason: event.reason });
    log.warn({ provider, received, skippedCount: parsed.skipped.length, skipped }, 'webhook batch: malformed events skipped, not stored; the other events processed');
  }
  log.info(
    { provider, received, stored: summary.stored, duplicates: summary.duplicates, linked: summary.linked, confirmed: summary.confirmed, suppressed: summary.suppressed.length, note: parsed.note },
    'webhook processed',
  );
  return json(200, {
    received,
    stored: summary.stored,
    duplicates: summary.duplicates,
    confirmed: summary.confirmed.length,
    skippedCount: parsed.skipped.length,
    skipped,
    ...(parsed.note ? { note: parsed.note } : {}),
  });
}
