import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { correlationOf } from '@/lib/ledger/notice-key';
import type { OutgoingNotice } from '@/lib/mail/transport';
import { startPostmarkPeer, type PostmarkPeer } from '@/testing/postmark-peer';
import { createPostmarkTransport, POSTMARK_BATCH_LIMIT } from './transport';

/**
 * Postmark's batch call through the official client against the local peer: one outcome per
 * message in request order, a per-item refusal for that item only, and a request refused or
 * unanswered whole giving every item the same class (issue 27 item 3's groundwork).
 */
let peer: PostmarkPeer;
let counter = 0;

function notice(to: string): OutgoingNotice {
  counter += 1;
  return {
    noticeKey: `${counter.toString(16).padStart(32, '0')}${'a'.repeat(32)}`,
    to,
    subject: 'Your renewal',
    text: 'hello',
    html: '<p>hello</p>',
    listUnsubscribe: null,
  };
}

const transport = (overrides: { serverToken?: string; timeoutMs?: number } = {}) =>
  createPostmarkTransport({
    serverToken: overrides.serverToken ?? peer.serverToken,
    apiBaseUrl: peer.baseUrl,
    messageStream: 'outbound',
    from: 'Notices <n@notices.test>',
    timeoutMs: overrides.timeoutMs ?? 5_000,
  });

beforeAll(async () => {
  peer = await startPostmarkPeer();
});

afterAll(async () => {
  await peer?.stop();
});

describe('Postmark sendBatch', () => {
  it('answers one outcome per message in order: accepted with its MessageID, a 406 item refused for its recipient only', async () => {
    peer.refuse((to) => (to === 'inactive@example.test' ? { errorCode: 406 } : null));
    try {
      const mails = [notice('a@example.test'), notice('inactive@example.test'), notice('c@example.test')];
      const outcomes = await transport().sendBatch(mails);
      const byCorrelation = (mail: OutgoingNotice) => peer.messages().find((message) => message.correlation === correlationOf(mail.noticeKey));
      expect(outcomes).toEqual([
        { kind: 'accepted', providerMessageId: byCorrelation(mails[0] ?? notice(''))?.messageId },
        expect.objectContaining({ kind: 'rejected', permanent: true, failure: 'recipient_refused', errorClass: 'postmark_406' }),
        { kind: 'accepted', providerMessageId: byCorrelation(mails[2] ?? notice(''))?.messageId },
      ]);
      expect(byCorrelation(mails[1] ?? notice(''))).toBeUndefined();
      expect(peer.requests()).toBeGreaterThan(0);
    } finally {
      peer.refuse(null);
    }
  });

  it('gives every item the one class of a request refused or unanswered whole', async () => {
    const two = () => [notice('a@example.test'), notice('b@example.test')];
    expect(await transport({ serverToken: 'wrong' }).sendBatch(two())).toEqual([
      expect.objectContaining({ failure: 'config_broken', errorClass: 'postmark_10' }),
      expect.objectContaining({ failure: 'config_broken', errorClass: 'postmark_10' }),
    ]);
    peer.setFault({ kind: 'throttle', retryAfterSeconds: 3 });
    expect((await transport().sendBatch(two())).map((outcome) => outcome.kind === 'rejected' && outcome.failure)).toEqual(['nothing_left', 'nothing_left']);
    peer.setFault({ kind: 'error-after-accept' });
    expect((await transport().sendBatch(two())).map((outcome) => outcome.kind)).toEqual(['unknown', 'unknown']);
    peer.setFault({ kind: 'drop-after-accept' });
    expect(await transport().sendBatch(two())).toEqual([
      { kind: 'unknown', errorClass: 'connection_lost', phase: 'response' },
      { kind: 'unknown', errorClass: 'connection_lost', phase: 'response' },
    ]);
    peer.setFault({ kind: 'delay', ms: 2_000 });
    expect(await transport({ timeoutMs: 200 }).sendBatch(two())).toEqual([
      { kind: 'unknown', errorClass: 'timeout', phase: 'response' },
      { kind: 'unknown', errorClass: 'timeout', phase: 'response' },
    ]);
    peer.setFault({ kind: 'none' });
  });

  it('refuses more than Postmark takes before anything is sent, and sends nothing for an empty batch', async () => {
    const before = peer.requests();
    const many = Array.from({ length: POSTMARK_BATCH_LIMIT + 1 }, (_, index) => notice(`r${String(index)}@example.test`));
    await expect(transport().sendBatch(many)).rejects.toThrow(RangeError);
    expect(await transport().sendBatch([])).toEqual([]);
    expect(peer.requests()).toBe(before);
  });
});
