import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { config } from '@/lib/config';
import { createLogger } from '@/lib/log';
import { startTwilioPeer } from '@/testing/twilio-peer';

/**
 * The demo's SMS peer: `tsx scripts/twilio-peer.ts`. Answers the official twilio client on
 * TWILIO_PEER_PORT as Twilio's Messages API does (TWILIO_ACCOUNT_SID / TWILIO_AUTH_TOKEN) and
 * posts signed status callbacks (sent, then delivered) to each message's StatusCallback on the
 * console. Numbers ending in 0000 are refused as unsubscribed (21610), so the opt-out path can
 * be seen in the demo. With TWILIO_PEER_OUTBOX each created message is appended there (one JSON
 * line: time, to, body, segments), so what a customer's phone shows can be read.
 */
const log = createLogger('twilio-peer');
const settings = config();
if (!settings.TWILIO_ACCOUNT_SID || !settings.TWILIO_AUTH_TOKEN) {
  log.error('TWILIO_ACCOUNT_SID and TWILIO_AUTH_TOKEN are required');
  process.exit(1);
}
const peer = await startTwilioPeer({
  accountSid: settings.TWILIO_ACCOUNT_SID,
  authToken: settings.TWILIO_AUTH_TOKEN,
  port: settings.TWILIO_PEER_PORT,
  callbackDelayMs: 500,
});
peer.setFault((to) => (to.endsWith('0000') ? { kind: 'refuse', code: 21610 } : { kind: 'none' }));
log.info({ url: peer.baseUrl }, 'twilio peer listening');

const outbox = settings.TWILIO_PEER_OUTBOX ? path.resolve(settings.TWILIO_PEER_OUTBOX) : null;
if (outbox) mkdirSync(path.dirname(outbox), { recursive: true });
let written = 0;

function writeNewMessages(): void {
  if (!outbox) return;
  const messages = peer.messages();
  for (; written < messages.length; written += 1) {
    const message = messages[written];
    if (message) appendFileSync(outbox, `${JSON.stringify({ at: new Date().toISOString(), to: message.to, body: message.body })}\n`);
  }
}

let reported = 0;
const progress = setInterval(() => {
  writeNewMessages();
  const count = peer.messages().length;
  if (count === reported) return;
  reported = count;
  log.info({ messages: count }, 'messages created');
}, 1_000);

const shutdown = async () => {
  clearInterval(progress);
  writeNewMessages();
  await peer.stop();
  process.exit(0);
};
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());
