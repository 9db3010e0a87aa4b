import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { config } from '@/lib/config';
import { createLogger } from '@/lib/log';
import { startSmtpSink } from '@/testing/smtp-sink';

/**
 * The demo's mail peer: `tsx scripts/smtp-sink.ts`. Listens on SMTP_SINK_PORT and, when
 * SMTP_SINK_EVENTS_URL and WEBHOOK_SECRET are set, posts signed accepted/delivered events
 * back to the console (`/api/webhooks/generic`). Recipients whose local part starts with
 * `bounce` get a hard bounce instead, so the suppression path can be seen in the demo. With
 * SMTP_SINK_MAILDIR each message is also written there as it arrived (`.eml`, open it in any mail
 * client or read the parts as text), so what a customer receives can be looked at.
 */
const log = createLogger('smtp-sink');
const settings = config();
if (settings.SMTP_SINK_EVENTS_URL && !settings.WEBHOOK_SECRET) {
  log.error('SMTP_SINK_EVENTS_URL is set but WEBHOOK_SECRET is not: events cannot be signed');
  process.exit(1);
}

const sink = await startSmtpSink({
  port: settings.SMTP_SINK_PORT,
  eventsUrl: settings.SMTP_SINK_EVENTS_URL,
  eventsSecret: settings.WEBHOOK_SECRET,
  eventDelayMs: settings.SMTP_SINK_EVENT_DELAY,
  bounce: (recipient) => recipient.startsWith('bounce'),
});
log.info({ url: sink.url, events: settings.SMTP_SINK_EVENTS_URL ?? null }, 'smtp sink listening');

const maildir = settings.SMTP_SINK_MAILDIR ? path.resolve(settings.SMTP_SINK_MAILDIR) : null;
if (maildir) mkdirSync(maildir, { recursive: true });
let written = 0;

/** Writes the messages received since the last call, numbered in arrival order. */
function writeNewMessages(): void {
  if (!maildir) return;
  const messages = sink.messages();
  for (; written < messages.length; written += 1) {
    const message = messages[written];
    if (!message) continue;
    const name = `${String(written + 1).padStart(5, '0')}-${(message.correlation ?? 'uncorrelated').replace(/[^a-z0-9]/gi, '').slice(0, 32)}.eml`;
    writeFileSync(path.join(maildir, name), message.raw);
  }
}

let reported = 0;
const progress = setInterval(() => {
  writeNewMessages();
  const count = sink.messages().length;
  if (count === reported) return;
  reported = count;
  log.info({ received: count, ...(maildir ? { maildir } : {}) }, 'messages received');
}, 1_000);

const shutdown = async () => {
  clearInterval(progress);
  writeNewMessages();
  await sink.stop();
  process.exit(0);
};
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());
