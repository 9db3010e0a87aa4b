import type { RequestFault } from '@/testing/http-peer';
import { startPostmarkPeer, type PostmarkPeer } from '@/testing/postmark-peer';
import { isBouncingRecipient } from './plan';
import { hashUnit } from './prng';

/**
 * The chaos run's relay when the workers send through Postmark (`npm run chaos -- --provider
 * postmark`): the local Postmark peer (testing/postmark-peer.ts) answering the workers' official
 * client, batched (`POST /email/batch`), with its faults drawn per request from the seed — 429
 * with Retry-After (nothing left), a 5xx after accepting and a dropped connection after accepting
 * (every item of the call unknown), an answer delayed past the visibility timeout (a second
 * worker gets the wake-up while the first waits) or past EMAIL_API_TIMEOUT (unknown, accepted) —
 * and a per-item 406 (inactive recipient) for the plan's bouncing recipients.
 *
 * The peer posts no webhooks: every unknown item it holds must be settled by the workers'
 * provider reconciler through its Messages API (lib/reconcile/provider-lookups.ts).
 * What the harness reads of a relay (`ChaosRelay`) is the SMTP sink's shape, so one verdict
 * counts both: a message the peer accepted is a hand-over (the reconciler can find it).
 */
export type ChaosRelayMessage = { correlation: string | null; outcome: 'accepted' | 'dropped-after-data'; to: string[] };

export type ChaosRelay = {
  messages: () => ChaosRelayMessage[];
  /** Messages accepted whose answer is still held (a delay fault). */
  stalled: () => unknown[];
};

export type PostmarkRates = {
  throttle: number;
  errorAfterAccept: number;
  dropAfterAccept: number;
  delayPastVisibility: number;
  delayPastTimeout: number;
};

export const defaultPostmarkRates: PostmarkRates = {
  throttle: 0.04,
  errorAfterAccept: 0.02,
  dropAfterAccept: 0.02,
  delayPastVisibility: 0.015,
  delayPastTimeout: 0.01,
};

export type PostmarkRelay = ChaosRelay & { peer: PostmarkPeer; env: Record<string, string>; stop: () => Promise<void> };

export async function startPostmarkRelay({
  seed,
  rates = defaultPostmarkRates,
  injected,
  delays,
}: {
  seed: number;
  rates?: PostmarkRates;
  injected: Record<string, number>;
  /** How long a delay past the visibility timeout lasts, and one past EMAIL_API_TIMEOUT. */
  delays: { pastVisibilityMs: number; pastTimeoutMs: number };
}): Promise<PostmarkRelay> {
  const peer = await startPostmarkPeer();
  const note = (name: string, fault: RequestFault): RequestFault => {
    injected[name] = (injected[name] ?? 0) + 1;
    return fault;
  };
  peer.setFault((requestIndex) => {
    const roll = hashUnit(seed, 'postmark-fault', requestIndex);
    let edge = rates.throttle;
    if (roll < edge) return note('postmark_429', { kind: 'throttle', retryAfterSeconds: 1 });
    edge += rates.errorAfterAccept;
    if (roll < edge) return note('postmark_5xx_after_accept', { kind: 'error-after-accept', status: 503 });
    edge += rates.dropAfterAccept;
    if (roll < edge) return note('postmark_drop_after_accept', { kind: 'drop-after-accept' });
    edge += rates.delayPastVisibility;
    if (roll < edge) return note('postmark_delay_past_visibility', { kind: 'delay', ms: delays.pastVisibilityMs });
    edge += rates.delayPastTimeout;
    if (roll < edge) return note('postmark_delay_past_timeout', { kind: 'delay', ms: delays.pastTimeoutMs });
    return { kind: 'none' };
  });
  peer.refuse((to) => {
    if (!isBouncingRecipient(to)) return null;
    injected.postmark_406_inactive = (injected.postmark_406_inactive ?? 0) + 1;
    return { errorCode: 406 };
  });
  return {
    peer,
    env: { EMAIL_PROVIDER: 'postmark', POSTMARK_SERVER_TOKEN: peer.serverToken, POSTMARK_API_BASE_URL: peer.baseUrl },
    messages: () => peer.messages().map((message) => ({ correlation: message.correlation, outcome: 'accepted', to: message.to })),
    stalled: () => peer.messages().filter((message) => message.answered === 'pending'),
    stop: () => peer.stop(),
  };
}
