import { describe, expect, it } from 'vitest';
import { recipientLinkUrl, signRecipientToken, verifyRecipientToken } from './link';

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
