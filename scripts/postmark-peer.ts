import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { config } from '@/lib/config';
import { createLogger } from '@/lib/log';
import { postmarkDeliveryWebhook, startPostmarkPeer } from '@/testing/postmark-peer';

/**
 * The demo's Postmark peer (`DEMO_EMAIL_PROVIDER=postmark npm run demo`): answers the official
 * postmark client on POSTMARK_PEER_PORT as Postmark's Email API does (POSTMARK_SERVER_TOKEN), and
 * posts a Delivery webhook for each accepted message to POSTMARK_PEER_EVENTS_URL with the
 * console's Basic credentials (POSTMARK_WEBHOOK_USER / _PASSWORD), as Postmark would. With
 * POSTMARK_PEER_OUTBOX each accepted message is appended there (one JSON line: recipient and subject).
 */
const log = createLogger('postmark-peer');
const settings = config();
if (!settings.POSTMARK_SERVER_TOKEN) {
  log.error('POSTMARK_SERVER_TOKEN is required');
  process.exit(1);
}
const peer = await startPostmarkPeer({ serverToken: settings.POSTMARK_SERVER_TOKEN, port: settings.POSTMARK_PEER_PORT });
log.info({ url: peer.baseUrl }, 'postmark peer listening');

const eventsUrl = settings.POSTMARK_PEER_EVENTS_URL ?? null;
const authorization = `Basic ${Buffer.from(`${settings.POSTMARK_WEBHOOK_USER ?? ''}:${settings.POSTMARK_WEBHOOK_PASSWORD ?? ''}`).toString('base64')}`;
const outbox = settings.POSTMARK_PEER_OUTBOX ? path.resolve(settings.POSTMARK_PEER_OUTBOX) : null;
if (outbox) mkdirSync(path.dirname(outbox), { recursive: true });
let handled = 0;
let posting = false;

async function handleNewMessages(): Promise<void> {
  if (posting) return;
  posting = true;
  try {
    const messages = peer.messages();
    for (; handled < messages.length; handled += 1) {
      const message = messages[handled];
      if (!message) continue;
      if (outbox)
        appendFileSync(outbox, `${JSON.stringify({ at: new Date().toISOString(), to: message.to, subject: message.subject, messageId: message.messageId })}\n`);
      if (!eventsUrl) continue;
      const body = JSON.stringify(postmarkDeliveryWebhook(message));
      const response = await fetch(eventsUrl, {
        method: 'POST',
        headers: { authorization, 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(10_000),
      }).catch((error: unknown) => error);
      if (!(response instanceof Response) || !response.ok)
        log.warn({ status: response instanceof Response ? response.status : null }, 'delivery webhook not taken; not retried');
    }
  } finally {
    posting = false;
  }
}

const progress = setInterval(() => void handleNewMessages(), 500);

const shutdown = async () => {
  clearInterval(progress);
  await handleNewMessages();
  await peer.stop();
  process.exit(0);
};
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());
