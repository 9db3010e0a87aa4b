import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';

/** HKDF's info for this key alone: no other use of NOTICE_KEY_SECRET derives the same bytes. */
const KEY_LABEL = 'notice-ledger/mfa-secret/v1';
const VERSION = 'v1';

function sealingKey(noticeKeySecret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(noticeKeySecret, 'utf8'), Buffer.alloc(0), KEY_LABEL, 32));
}

/** A TOTP secret as stored: `v1.<iv>.<tag>.<ciphertext>`, base64url, AES-256-GCM bound to its user id. */
export function sealMfaSecret({ secret, userId, noticeKeySecret }: { secret: string; userId: string; noticeKeySecret: string }): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(noticeKeySecret), iv);
  cipher.setAAD(Buffer.from(userId, 'utf8'));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return [VERSION, iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

/** The secret, or null when the stored value was altered, moved to another user, or sealed under another NOTICE_KEY_SECRET. */
export function openMfaSecret({ sealed, userId, noticeKeySecret }: { sealed: string; userId: string; noticeKeySecret: string }): string | null {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== VERSION || !iv || !tag || body === undefined) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealingKey(noticeKeySecret), Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(userId, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}
