import { config } from '@/lib/config';
import { createLogger } from '@/lib/log';
import { startSmtpSink } from '@/testing/smtp-sink';

/**
 * The demo's mail peer: `tsx scripts/smtp-sink.ts`. Listens on SMTP_SINK_PORT and, when
 * SMTP_SINK_EVENTS_URL and WEBHOOK_SECRET are set, posts signed accepted/delivered events
 * back to the console (`/api/webhooks/generic`). Recipients whose local part starts with
 * `bounce` get a hard bounce instead, so the suppression path can be seen in the demo.
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

let reported = 0;
const progress = setInterval(() => {
  const count = sink.messages().length;
  if (count === reported) return;
  reported = count;
  log.info({ received: count }, 'messages received');
}, 5_000);

const shutdown = async () => {
  clearInterval(progress);
  await sink.stop();
  process.exit(0);
};
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());
