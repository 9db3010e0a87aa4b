import { config } from '@/lib/config';
import { createLogger } from '@/lib/log';
import { startTwilioPeer } from '@/testing/twilio-peer';

/**
 * The demo's SMS peer: `tsx scripts/twilio-peer.ts`. Answers the official twilio client on
 * TWILIO_PEER_PORT as Twilio's Messages API does (TWILIO_ACCOUNT_SID / TWILIO_AUTH_TOKEN) and
 * posts signed status callbacks (sent, then delivered) to each message's StatusCallback on the
 * console. Numbers ending in 0000 are refused as unsubscribed (21610), so the opt-out path can
 * be seen in the demo.
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

let reported = 0;
const progress = setInterval(() => {
  const count = peer.messages().length;
  if (count === reported) return;
  reported = count;
  log.info({ messages: count }, 'messages created');
}, 5_000);

const shutdown = async () => {
  clearInterval(progress);
  await peer.stop();
  process.exit(0);
};
process.once('SIGINT', () => void shutdown());
process.once('SIGTERM', () => void shutdown());
