import { createHmac } from 'node:crypto';

/**
 * The keys recipient links are signed with (RECIPIENT_LINK_KEYS; README "Rotating the link
 * key"). Each key has a one-character id that every compact link carries (lib/recipient/link.ts),
 * so a link says which key to check it with. The first key signs; the others only verify, each
 * until the date written after it (the overlap: links already in mailboxes keep working) or for
 * as long as it stays listed.
 *
 *   RECIPIENT_LINK_KEYS=1:<32+ characters>,0:derived:2028-01-31
 *
 * `derived` is the key every deployment signed with before it had a list: derived from
 * NOTICE_KEY_SECRET for this use alone (it can never double as a notice key). It is the default,
 * `0:derived`, and the only key the old `v1.` links (mails sent before compact links) verify
 * with. Notice keys never depend on this setting.
 */

export type LinkKeySpec = { kid: string; secret: string; retiresAt: Date | null };

export type LinkKey = { kid: string; key: Buffer; retiresAt: Date | null };

export type LinkKeyRing = {
  /** Signs every new link. */
  signing: LinkKey;
  byKid: ReadonlyMap<string, LinkKey>;
  /** The key derived from NOTICE_KEY_SECRET while it is listed: the one `v1.` links were signed with. */
  derived: LinkKey | null;
};

export const DEFAULT_LINK_KEYS = '0:derived';
const DERIVED = 'derived';
const kidPattern = /^[A-Za-z0-9]$/;
// No ':' or ',' (the list's separators); base64, base64url and hex secrets all fit.
const secretPattern = /^[A-Za-z0-9+/=_.-]{32,}$/;
const datePattern = /^\d{4}-\d{2}-\d{2}$/;

/** RECIPIENT_LINK_KEYS → its entries, or what is wrong with it (never echoing a secret). */
export function parseLinkKeys(text: string): { ok: true; specs: LinkKeySpec[] } | { ok: false; message: string } {
  const entries = text.split(',').map((entry) => entry.trim());
  const specs: LinkKeySpec[] = [];
  for (const [index, entry] of entries.entries()) {
    const position = `entry ${String(index + 1)}`;
    const [kid = '', secret = '', until, ...rest] = entry.split(':');
    if (rest.length > 0 || secret === '') return { ok: false, message: `${position} must be kid:secret or kid:secret:YYYY-MM-DD` };
    if (!kidPattern.test(kid)) return { ok: false, message: `${position}: a key id is one letter or digit` };
    if (secret !== DERIVED && !secretPattern.test(secret)) {
      return {
        ok: false,
        message: `${position} (key ${kid}): the secret must be at least 32 characters of A-Z a-z 0-9 + / = _ . - (use \`openssl rand -hex 32\`), or "derived"`,
      };
    }
    let retiresAt: Date | null = null;
    if (until !== undefined) {
      retiresAt = new Date(`${until}T00:00:00Z`);
      if (!datePattern.test(until) || Number.isNaN(retiresAt.getTime()) || retiresAt.toISOString().slice(0, 10) !== until) {
        return { ok: false, message: `${position} (key ${kid}): "${until}" is not a date like 2028-01-31` };
      }
      if (index === 0) return { ok: false, message: `the first key (${kid}) signs new links and cannot have an end date` };
    }
    if (specs.some((spec) => spec.kid === kid)) return { ok: false, message: `key id ${kid} is listed twice` };
    if (secret === DERIVED && specs.some((spec) => spec.secret === DERIVED)) return { ok: false, message: '"derived" is listed twice' };
    specs.push({ kid, secret, retiresAt });
  }
  return { ok: true, specs };
}

/** The first link key, the v1 format's: kept as it was, so the links already sent keep verifying. */
export function derivedLinkKey(noticeKeySecret: string): Buffer {
  return createHmac('sha256', noticeKeySecret).update('notice-ledger/recipient-link/v1', 'utf8').digest();
}

function keyOf(secret: string, noticeKeySecret: string): Buffer {
  if (secret === DERIVED) return derivedLinkKey(noticeKeySecret);
  return createHmac('sha256', secret).update('notice-ledger/recipient-link/v2', 'utf8').digest();
}

export function linkKeyRing({ specs, noticeKeySecret }: { specs: readonly LinkKeySpec[]; noticeKeySecret: string }): LinkKeyRing {
  const keys = specs.map((spec) => ({ kid: spec.kid, key: keyOf(spec.secret, noticeKeySecret), retiresAt: spec.retiresAt }));
  const [signing] = keys;
  if (!signing) throw new RangeError('a link key ring needs a signing key');
  const derivedAt = specs.findIndex((spec) => spec.secret === DERIVED);
  return { signing, byKid: new Map(keys.map((key) => [key.kid, key])), derived: keys[derivedAt] ?? null };
}

/** The ring of a deployment that never set RECIPIENT_LINK_KEYS (and of tests that only have the key secret). */
export function defaultLinkKeyRing(noticeKeySecret: string): LinkKeyRing {
  return linkKeyRing({ specs: [{ kid: '0', secret: DERIVED, retiresAt: null }], noticeKeySecret });
}
