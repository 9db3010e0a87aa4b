import { describe, expect, it } from 'vitest';
import { defaultLinkKeyRing, linkKeyRing } from './link-keys';
import { linkNoticeRef, recipientLinkUrl, signCompactToken, signRecipientToken, verifyRecipientToken } from './link';

const secret = 's'.repeat(40);
const noticeKey = 'a1'.repeat(32);
const expiresAt = new Date('2027-01-01T00:00:00Z');
const before = new Date('2026-12-31T23:59:59Z');

describe('recipient link tokens', () => {
  it('round-trips the notice key, purpose and expiry', () => {
    const token = signRecipientToken({ secret, noticeKey, purpose: 'page', expiresAt });
    expect(verifyRecipientToken({ secret, token, now: before })).toEqual({ ok: true, noticeKey, purpose: 'page', expiresAt });
  });

  it('expires at the instant it names', () => {
    const token = signRecipientToken({ secret, noticeKey, purpose: 'unsubscribe', expiresAt });
    expect(verifyRecipientToken({ secret, token, now: expiresAt })).toEqual({ ok: false, reason: 'expired' });
  });

  it('refuses a token signed with another secret, or with any character of its body or signature changed', () => {
    const token = signRecipientToken({ secret, noticeKey, purpose: 'page', expiresAt });
    expect(verifyRecipientToken({ secret: 't'.repeat(40), token, now: before })).toEqual({ ok: false, reason: 'tampered' });
    const [v, body, signature] = token.split('.') as [string, string, string];
    // A later expiry or another purpose under the same signature.
    const forged = Buffer.from(`unsubscribe:${noticeKey}:${String(expiresAt.getTime() / 1000)}`).toString('base64url');
    expect(verifyRecipientToken({ secret, token: `${v}.${forged}.${signature}`, now: before })).toEqual({ ok: false, reason: 'tampered' });
    for (let i = 0; i < signature.length; i += 7) {
      const flipped = signature.slice(0, i) + (signature[i] === 'A' ? 'B' : 'A') + signature.slice(i + 1);
      expect(verifyRecipientToken({ secret, token: `${v}.${body}.${flipped}`, now: before }).ok).toBe(false);
    }
  });

  it('calls garbage malformed without throwing', () => {
    for (const token of ['', 'v1', 'v1..', 'v2.a.b', 'v1.a.b.c', `v1.${'x'.repeat(600)}.y`, 'v1.%%%.abc', 'v1.abc.%%']) {
      expect(verifyRecipientToken({ secret, token, now: before })).toMatchObject({ ok: false });
    }
  });

  it('refuses to sign what it could not verify', () => {
    expect(() => signRecipientToken({ secret, noticeKey: 'not-a-key', purpose: 'page', expiresAt })).toThrow(RangeError);
  });

  it('builds the URL under the public base, keeping its path prefix', () => {
    expect(recipientLinkUrl('https://notices.example.com/app/', '/r', 'v1.a.b')).toBe('https://notices.example.com/app/r/v1.a.b');
    expect(recipientLinkUrl('http://localhost:3000', '/r', 'v1.a.b')).toBe('http://localhost:3000/r/v1.a.b');
  });
});

describe('compact recipient link tokens', () => {
  const ring = defaultLinkKeyRing(secret);
  const now = new Date('2026-12-02T00:00:00Z');

  it('are 34 base64url characters — key id, purpose, the notice key’s first 24 hex, a 96-bit tag — and depend on nothing else', () => {
    const token = signCompactToken({ keys: ring, noticeKey, purpose: 'page' });
    expect(token).toMatch(/^0p[A-Za-z0-9_-]{32}$/);
    expect(Buffer.from(token.slice(2, 18), 'base64url').toString('hex')).toBe(noticeKey.slice(0, 24));
    expect(signCompactToken({ keys: ring, noticeKey, purpose: 'page' })).toBe(token);
    expect(signCompactToken({ keys: ring, noticeKey, purpose: 'unsubscribe' })).toMatch(/^0u/);
    expect(verifyRecipientToken({ keys: ring, token, now })).toEqual({ ok: true, purpose: 'page', noticePrefix: noticeKey.slice(0, 24), kid: '0' });
    expect(verifyRecipientToken({ secret, token, now })).toEqual(verifyRecipientToken({ keys: ring, token, now }));
    expect(recipientLinkUrl('https://notices.example-merchant.com', '/r', token).length - 'https://notices.example-merchant.com'.length).toBe(37);
  });

  it('refuses another key, another purpose under the same tag, and any changed character', () => {
    const token = signCompactToken({ keys: ring, noticeKey, purpose: 'page' });
    expect(verifyRecipientToken({ secret: 't'.repeat(40), token, now })).toEqual({ ok: false, reason: 'tampered' });
    expect(verifyRecipientToken({ keys: ring, token: `0u${token.slice(2)}`, now })).toEqual({ ok: false, reason: 'tampered' });
    // Another notice's prefix under this tag: the tag covers the prefix.
    const other = signCompactToken({ keys: ring, noticeKey: 'b2'.repeat(32), purpose: 'page' });
    expect(verifyRecipientToken({ keys: ring, token: `${other.slice(0, 18)}${token.slice(18)}`, now })).toEqual({ ok: false, reason: 'tampered' });
    for (let i = 2; i < token.length; i += 1) {
      const changed = token.slice(0, i) + (token[i] === 'A' ? 'B' : 'A') + token.slice(i + 1);
      expect(verifyRecipientToken({ keys: ring, token: changed, now }), changed).toEqual({ ok: false, reason: 'tampered' });
    }
  });

  it('tells the formats apart by shape: a token one character short or long, or with a letter but p/u second, is malformed', () => {
    const token = signCompactToken({ keys: ring, noticeKey, purpose: 'page' });
    for (const garbage of [token.slice(0, -1), `${token}A`, `0x${token.slice(2)}`, `.p${token.slice(2)}`, `0p${token.slice(2, -1)}.`]) {
      expect(verifyRecipientToken({ keys: ring, token: garbage, now }), garbage).toEqual({ ok: false, reason: 'malformed' });
    }
  });

  it('a key id the ring does not hold is refused as tampered; a key past its end date, as expired (only when its tag is right)', () => {
    const old = linkKeyRing({ specs: [{ kid: 'a', secret: 'k'.repeat(40), retiresAt: null }], noticeKeySecret: secret });
    const token = signCompactToken({ keys: old, noticeKey, purpose: 'unsubscribe' });
    expect(verifyRecipientToken({ keys: ring, token, now })).toEqual({ ok: false, reason: 'tampered' });
    const rotated = linkKeyRing({
      specs: [
        { kid: 'b', secret: 'n'.repeat(40), retiresAt: null },
        { kid: 'a', secret: 'k'.repeat(40), retiresAt: new Date('2027-01-01T00:00:00Z') },
      ],
      noticeKeySecret: secret,
    });
    expect(verifyRecipientToken({ keys: rotated, token, now })).toMatchObject({ ok: true, kid: 'a', purpose: 'unsubscribe' });
    expect(verifyRecipientToken({ keys: rotated, token, now: new Date('2027-01-01T00:00:00Z') })).toEqual({ ok: false, reason: 'expired' });
    const forged = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
    expect(verifyRecipientToken({ keys: rotated, token: forged, now: new Date('2027-01-01T00:00:00Z') })).toEqual({ ok: false, reason: 'tampered' });
    expect(signCompactToken({ keys: rotated, noticeKey, purpose: 'page' })).toMatch(/^bp/);
  });

  it('a v1 token verifies with the key derived from NOTICE_KEY_SECRET while it is listed, until its end date', () => {
    const v1 = signRecipientToken({ secret, noticeKey, purpose: 'page', expiresAt });
    const withDerived = (retiresAt: Date | null) =>
      linkKeyRing({
        specs: [
          { kid: '1', secret: 'n'.repeat(40), retiresAt: null },
          { kid: '0', secret: 'derived', retiresAt },
        ],
        noticeKeySecret: secret,
      });
    expect(verifyRecipientToken({ keys: withDerived(null), token: v1, now: before })).toEqual({ ok: true, noticeKey, purpose: 'page', expiresAt });
    expect(verifyRecipientToken({ keys: withDerived(new Date('2026-12-31T00:00:00Z')), token: v1, now: before })).toEqual({ ok: false, reason: 'expired' });
    const without = linkKeyRing({ specs: [{ kid: '1', secret: 'n'.repeat(40), retiresAt: null }], noticeKeySecret: secret });
    expect(verifyRecipientToken({ keys: without, token: v1, now: before })).toEqual({ ok: false, reason: 'tampered' });
  });

  it('names the notice by the same 24 hex in either format (what the per-notice counters count)', () => {
    const v1 = verifyRecipientToken({ secret, token: signRecipientToken({ secret, noticeKey, purpose: 'page', expiresAt }), now: before });
    const compact = verifyRecipientToken({ keys: ring, token: signCompactToken({ keys: ring, noticeKey, purpose: 'page' }), now: before });
    if (!v1.ok || !compact.ok) throw new Error('both verify');
    expect(linkNoticeRef(v1)).toBe(noticeKey.slice(0, 24));
    expect(linkNoticeRef(compact)).toBe(noticeKey.slice(0, 24));
  });
});
