import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The signed links a notice carries to its recipient: the recipient page (cancel, preferences)
 * and the one-click unsubscribe URL (RFC 8058). A token names the notice by its full key, what
 * it is for and when it stops working, and is HMAC-SHA256-signed with a key derived from
 * NOTICE_KEY_SECRET for this use alone (a link signature can never double as a notice key).
 *
 *   v1.<base64url(purpose:notice_key:expires_unix_seconds)>.<base64url(signature)>
 *
 * A token is verified before anything is read for it; a tampered, malformed or expired one is
 * refused with its reason and nothing is looked up.
 */

export const linkPurposes = ['page', 'unsubscribe'] as const;
export type LinkPurpose = (typeof linkPurposes)[number];

export type RecipientLink = { noticeKey: string; purpose: LinkPurpose; expiresAt: Date };

export type LinkVerdict = ({ ok: true } & RecipientLink) | { ok: false; reason: 'malformed' | 'tampered' | 'expired' };

const version = 'v1';
const noticeKeyPattern = /^[0-9a-f]{64}$/;
/** Longer than any URL a mail client keeps whole; a token is ~150 characters. */
const maxTokenLength = 512;

function linkKey(secret: string): Buffer {
  return createHmac('sha256', secret).update('notice-ledger/recipient-link/v1', 'utf8').digest();
}

function sign(secret: string, body: string): Buffer {
  return createHmac('sha256', linkKey(secret)).update(`${version}.${body}`, 'utf8').digest();
}

export function signRecipientToken({ secret, noticeKey, purpose, expiresAt }: { secret: string } & RecipientLink): string {
  if (!noticeKeyPattern.test(noticeKey)) throw new RangeError('a notice key is 64 lower-case hex characters');
  const expires = Math.floor(expiresAt.getTime() / 1000);
  if (!Number.isSafeInteger(expires) || expires <= 0) throw new RangeError('expiresAt must be a valid instant');
  const body = Buffer.from(`${purpose}:${noticeKey}:${String(expires)}`, 'utf8').toString('base64url');
  return `${version}.${body}.${sign(secret, body).toString('base64url')}`;
}

export function verifyRecipientToken({ secret, token, now = new Date() }: { secret: string; token: string; now?: Date }): LinkVerdict {
  if (typeof token !== 'string' || token.length > maxTokenLength) return { ok: false, reason: 'malformed' };
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== version) return { ok: false, reason: 'malformed' };
  const [, body, signature] = parts as [string, string, string];
  if (!/^[A-Za-z0-9_-]+$/.test(body) || !/^[A-Za-z0-9_-]+$/.test(signature)) return { ok: false, reason: 'malformed' };
  const expected = sign(secret, body);
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'tampered' };
  // Signed by us, so well-formed unless the format changed; checked anyway.
  const fields = Buffer.from(body, 'base64url').toString('utf8').split(':');
  const [purpose, noticeKey, expires] = fields;
  if (fields.length !== 3 || !linkPurposes.includes(purpose as LinkPurpose) || !noticeKeyPattern.test(noticeKey ?? '') || !/^\d{1,12}$/.test(expires ?? '')) {
    return { ok: false, reason: 'malformed' };
  }
  const expiresAt = new Date(Number(expires) * 1000);
  if (now.getTime() >= expiresAt.getTime()) return { ok: false, reason: 'expired' };
  return { ok: true, noticeKey: noticeKey as string, purpose: purpose as LinkPurpose, expiresAt };
}

/** `<PUBLIC_BASE_URL><path>/<token>`: the path is the route's (the recipient page, the unsubscribe endpoint). */
export function recipientLinkUrl(baseUrl: string, path: string, token: string): string {
  const base = new URL(baseUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  return new URL(`${prefix}${path}/${encodeURIComponent(token)}`, base).toString();
}
