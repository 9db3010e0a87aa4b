import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packagesLoadedAfter } from '@/testing/loaded-packages';
import { startTwilioPeer, type TwilioFault, type TwilioPeer } from '@/testing/twilio-peer';
import { createSmsTransport, statusCallbackUrl } from './transport';

const noticeKey = 'ab'.repeat(32);

describe('SMS transport: the official twilio client against the local peer', () => {
  let peer: TwilioPeer;
  const transport = (timeoutMs = 2_000) =>
    createSmsTransport({
      twilio: { accountSid: peer.accountSid, authToken: peer.authToken, sender: { from: '+15005550006' }, apiBaseUrl: peer.baseUrl, timeoutMs },
      // Nothing listens there: the callbacks are not what this file tests.
      statusCallbackFor: (correlation) => statusCallbackUrl('http://127.0.0.1:9', correlation),
    });
  beforeAll(async () => {
    peer = await startTwilioPeer();
    peer.setCallbacks('drop');
  });
  afterAll(async () => peer.stop());

  it('201 Created → accepted with the Message SID; the peer saw form fields, Basic auth and the StatusCallback with the correlation', async () => {
    peer.setFault({ kind: 'none' });
    const outcome = await transport().send({ noticeKey, to: '+14155550100', body: 'Hello' });
    expect(outcome).toMatchObject({ kind: 'accepted' });
    const sid = outcome.kind === 'accepted' ? outcome.providerMessageId : null;
    expect(sid).toMatch(/^SM[0-9a-f]{32}$/);
    const message = peer.messages().find((m) => m.sid === sid);
    expect(message).toMatchObject({ to: '+14155550100', from: '+15005550006', body: 'Hello', correlation: noticeKey.slice(0, 32) });
    expect(message?.statusCallback).toBe(`http://127.0.0.1:9/api/webhooks/twilio?c=${noticeKey.slice(0, 32)}`);
  });

  const cases: [string, TwilioFault, unknown][] = [
    ['21211 invalid To → permanent', { kind: 'refuse', code: 21211 }, { kind: 'rejected', permanent: true, errorClass: 'twilio_21211' }],
    [
      '21610 unsubscribed → permanent, opt-out',
      { kind: 'refuse', code: 21610 },
      { kind: 'rejected', permanent: true, errorClass: 'twilio_21610', optOut: true },
    ],
    ['21614 not mobile → permanent', { kind: 'refuse', code: 21614 }, { kind: 'rejected', permanent: true, errorClass: 'twilio_21614' }],
    ['429 / 20429 → retry', { kind: 'status', status: 429 }, { kind: 'rejected', permanent: false, errorClass: 'twilio_429' }],
    ['500 → retry', { kind: 'status', status: 500 }, { kind: 'rejected', permanent: false, errorClass: 'twilio_500' }],
    ['503 → retry', { kind: 'status', status: 503 }, { kind: 'rejected', permanent: false, errorClass: 'twilio_503' }],
  ];
  it.each(cases)('%s', async (_name, fault, expected) => {
    peer.setFault(fault);
    const before = peer.messages().length;
    expect(await transport().send({ noticeKey, to: '+14155550100', body: 'Hello' })).toMatchObject(expected as object);
    expect(peer.messages().length).toBe(before);
  });

  it('received but never answered → unknown (the message exists at the peer)', async () => {
    peer.setFault({ kind: 'timeout' });
    const before = peer.messages().length;
    expect(await transport(300).send({ noticeKey, to: '+14155550100', body: 'Hello' })).toEqual({ kind: 'unknown', errorClass: 'timeout', phase: 'response' });
    expect(peer.messages().length).toBe(before + 1);
  });

  it('wrong credentials → not created, our configuration broken (never failed; the transport pauses)', async () => {
    peer.setFault({ kind: 'none' });
    const wrong = createSmsTransport({
      twilio: { accountSid: peer.accountSid, authToken: 'x'.repeat(32), sender: { from: '+15005550006' }, apiBaseUrl: peer.baseUrl, timeoutMs: 2_000 },
      statusCallbackFor: (c) => statusCallbackUrl('http://127.0.0.1:9', c),
    });
    expect(await wrong.send({ noticeKey, to: '+14155550100', body: 'Hello' })).toMatchObject({
      kind: 'rejected',
      permanent: false,
      errorClass: 'twilio_20003',
      failure: 'config_broken',
    });
    expect(await wrong.probe()).toMatchObject({ kind: 'rejected', failure: 'config_broken', errorClass: 'twilio_20003' });
    expect(await transport().probe()).toEqual({ kind: 'accepted', providerMessageId: null });
  });

  it('nothing listening → connect_failed, definitely not sent', async () => {
    const closed = createSmsTransport({
      twilio: { accountSid: peer.accountSid, authToken: peer.authToken, sender: { from: '+15005550006' }, apiBaseUrl: 'http://127.0.0.1:9', timeoutMs: 2_000 },
      statusCallbackFor: (c) => statusCallbackUrl('http://127.0.0.1:9', c),
    });
    expect(await closed.send({ noticeKey, to: '+14155550100', body: 'Hello' })).toMatchObject({
      kind: 'rejected',
      permanent: false,
      errorClass: 'connect_failed',
      failure: 'nothing_left',
      phase: 'connect',
    });
    expect(await closed.probe()).toMatchObject({ kind: 'rejected', failure: 'nothing_left', phase: 'connect' });
  });
});

describe('loading Twilio’s library', () => {
  it('is left to the first send or probe: making the transport loads nothing of it', async () => {
    const make = `
      const { createSmsTransport } = await import('@/lib/sms/transport');
      globalThis.transport = createSmsTransport({
        twilio: { accountSid: 'AC${'0'.repeat(32)}', authToken: '${'0'.repeat(32)}', sender: { from: '+15005550006' }, apiBaseUrl: 'http://127.0.0.1:9', timeoutMs: 1_000 },
        statusCallbackFor: () => 'http://127.0.0.1:9/',
      });`;
    // Nothing listens on port 9: the probe is refused, before anything left.
    const probe = `const outcome = await globalThis.transport.probe(); if (outcome.errorClass !== 'connect_failed') throw new Error(JSON.stringify(outcome));`;
    expect(await packagesLoadedAfter([make, probe], ['twilio', 'axios'])).toEqual([[], ['twilio', 'axios']]);
  }, 30_000);
});
