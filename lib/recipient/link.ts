import { createHmac, timingSafeEqual } from 'node:crypto';
import { defaultLinkKeyRing, derivedLinkKey, type LinkKey, type LinkKeyRing } from './link-keys';

/**
 * The signed links a notice carries to its recipient: the recipient page (cancel, preferences)
 * and the one-click unsubscribe URL (RFC 8058). A token is verified before anything is read for
 * it; a tampered or malformed one is refused with its reason and nothing is looked up.
 *
 * Compact (every link minted now), 34 characters, so a text message has room for its words
 * (`/r/` + 34 = 37 characters after the host):
 *
 *   <kid><p|u><notice prefix: 16><tag: 16>
 *
 * - kid: the signing key's one-character id (lib/recipient/link-keys.ts), so keys can rotate;
 * - p (page) or u (unsubscribe): the purpose;
 * - the first 96 bits (24 hex) of the notice key, base64url: the server resolves it on the unique
 *   index of reminder_jobs.notice_key and accepts only a unique match. Keys are HMAC outputs, so
 *   two share a prefix by chance only (about n² / 2^97: 10^-11 at 10^9 notices), and a producer
 *   cannot aim one at another's prefix without 2^96 tries through the API; a prefix that matches
 *   two rows is refused as unknown, never guessed between;
 * - a tag: HMAC-SHA256 over the label, kid, purpose and prefix, truncated to 96 bits. A tag can
 *   only be checked online, one request to this server a guess (and counted per client address
 *   behind TRUSTED_PROXY_HOPS): at 10^5 guesses a second for a year (3·10^12) a forgery succeeds
 *   with odds of 4·10^-17.
 *   RFC 2104 (section 5) asks for at least 80 bits; NIST SP 800-107 sizes a truncated tag by the
 *   guesses an attacker gets, which online checking bounds.
 *
 * The expiry is not in the token: the server derives it from the notice's row
 * (lib/recipient/link-notice.ts), so it is checked after the notice is read.
 *
 * The old format, in mails sent before compact links, keeps verifying (with the key derived from
 * NOTICE_KEY_SECRET, while that key is listed): it names the full notice key and its expiry,
 *
 *   v1.<base64url(purpose:notice_key:expires_unix_seconds)>.<base64url(signature)>
 */

export const linkPurposes = ['page', 'unsubscribe'] as const;
export type LinkPurpose = (typeof linkPurposes)[number];

export type RecipientLink = { noticeKey: string; purpose: LinkPurpose; expiresAt: Date };

/** A v1 token's verdict names the whole key and its expiry; a compact one's names the key's prefix and the key id it was signed with. */
export type LinkVerdict =
  | ({ ok: true } & RecipientLink)
  | { ok: true; purpose: LinkPurpose; noticePrefix: string; kid: string }
  | { ok: false; reason: 'malformed' | 'tampered' | 'expired' };

export const NOTICE_PREFIX_HEX = 24;
const TAG_BYTES = 12;
const COMPACT_LENGTH = 2 + ((NOTICE_PREFIX_HEX / 2 + TAG_BYTES) * 4) / 3;
const compactPattern = /^[A-Za-z0-9][pu][A-Za-z0-9_-]{32}$/;
const purposeLetters: Record<LinkPurpose, string> = { page: 'p', unsubscribe: 'u' };

const version = 'v1';
const noticeKeyPattern = /^[0-9a-f]{64}$/;
/** Longer than any URL a mail client keeps whole; a v1 token is ~150 characters. */
const maxTokenLength = 512;

function assertNoticeKey(noticeKey: string): void {
  if (!noticeKeyPattern.test(noticeKey)) throw new RangeError('a notice key is 64 lower-case hex characters');
}

function compactTag(key: LinkKey, purposeLetter: string, prefix: Buffer): Buffer {
  // The label keeps a compact tag from ever being a v1 signature (those sign "v1.<body>").
  return createHmac('sha256', key.key)
    .update(`notice-ledger/recipient-link/compact\0${key.kid}${purposeLetter}`, 'utf8')
    .update(prefix)
    .digest()
    .subarray(0, TAG_BYTES);
}

/** A compact link's token, signed with the ring's signing key. */
export function signCompactToken({ keys, noticeKey, purpose }: { keys: LinkKeyRing; noticeKey: string; purpose: LinkPurpose }): string {
  assertNoticeKey(noticeKey);
  const letter = purposeLetters[purpose];
  const prefix = Buffer.from(noticeKey.slice(0, NOTICE_PREFIX_HEX), 'hex');
  const token = `${keys.signing.kid}${letter}${prefix.toString('base64url')}${compactTag(keys.signing, letter, prefix).toString('base64url')}`;
  if (token.length !== COMPACT_LENGTH) throw new RangeError('a compact token is 34 characters');
  return token;
}

function verifyCompact(keys: LinkKeyRing, token: string, now: Date): LinkVerdict {
  const key = keys.byKid.get(token.slice(0, 1));
  if (!key) return { ok: false, reason: 'tampered' };
  const letter = token.slice(1, 2);
  const prefix = Buffer.from(token.slice(2, 18), 'base64url');
  const given = Buffer.from(token.slice(18), 'base64url');
  const expected = compactTag(key, letter, prefix);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return { ok: false, reason: 'tampered' };
  // Ours, signed with a key whose overlap has ended: the link is as dead as an expired one.
  if (key.retiresAt && now.getTime() >= key.retiresAt.getTime()) return { ok: false, reason: 'expired' };
  return { ok: true, purpose: letter === 'u' ? 'unsubscribe' : 'page', noticePrefix: prefix.toString('hex'), kid: key.kid };
}

function sign(key: Buffer, body: string): Buffer {
  return createHmac('sha256', key).update(`${version}.${body}`, 'utf8').digest();
}

/** A v1 token, as mails sent before compact links carry them; production mints compact ones, tests mint these to prove old mail still works. */
export function signRecipientToken({ secret, noticeKey, purpose, expiresAt }: { secret: string } & RecipientLink): string {
  assertNoticeKey(noticeKey);
  const expires = Math.floor(expiresAt.getTime() / 1000);
  if (!Number.isSafeInteger(expires) || expires <= 0) throw new RangeError('expiresAt must be a valid instant');
  const body = Buffer.from(`${purpose}:${noticeKey}:${String(expires)}`, 'utf8').toString('base64url');
  return `${version}.${body}.${sign(derivedLinkKey(secret), body).toString('base64url')}`;
}

function verifyVersion1(keys: LinkKeyRing, token: string, now: Date): LinkVerdict {
  const parts = token.split('.');
  if (parts.length !== 3 || parts[0] !== version) return { ok: false, reason: 'malformed' };
  const [, body, signature] = parts as [string, string, string];
  if (!/^[A-Za-z0-9_-]+$/.test(body) || !/^[A-Za-z0-9_-]+$/.test(signature)) return { ok: false, reason: 'malformed' };
  // Only the key derived from NOTICE_KEY_SECRET ever signed this format; once it is unlisted, so are its links.
  if (!keys.derived) return { ok: false, reason: 'tampered' };
  const expected = sign(keys.derived.key, body);
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
  if (keys.derived.retiresAt && now.getTime() >= keys.derived.retiresAt.getTime()) return { ok: false, reason: 'expired' };
  return { ok: true, noticeKey: noticeKey as string, purpose: purpose as LinkPurpose, expiresAt };
}

/**
 * Either format, told apart by shape: a compact token is 34 base64url characters, a v1 token
 * starts `v1.`. `secret` stands for the default ring (RECIPIENT_LINK_KEYS unset).
 */
export function verifyRecipientToken({
  token,
  now = new Date(),
  ...given
}: ({ secret: string } | { keys: LinkKeyRing }) & { token: string; now?: Date }): LinkVerdict {
  if (typeof token !== 'string' || token.length > maxTokenLength) return { ok: false, reason: 'malformed' };
  const keys = 'keys' in given ? given.keys : defaultLinkKeyRing(given.secret);
  if (compactPattern.test(token)) return verifyCompact(keys, token, now);
  return verifyVersion1(keys, token, now);
}

/** The 24 hex a verified link names its notice by, in either format: what the per-notice counters count. */
export function linkNoticeRef(verdict: Extract<LinkVerdict, { ok: true }>): string {
  return 'noticeKey' in verdict ? verdict.noticeKey.slice(0, NOTICE_PREFIX_HEX) : verdict.noticePrefix;
}

/** `<PUBLIC_BASE_URL><path>/<token>`: the path is the route's (the recipient page, the unsubscribe endpoint). */
export function recipientLinkUrl(baseUrl: string, path: string, token: string): string {
  const base = new URL(baseUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  return new URL(`${prefix}${path}/${encodeURIComponent(token)}`, base).toString();
}
