import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { SealedWebhookSecret } from '@/db/schema';

/** HKDF's info for this key alone: no other use of NOTICE_KEY_SECRET derives the same bytes. */
const KEY_LABEL = 'notice-ledger/webhook-secret/v1';

function sealingKey(noticeKeySecret: string): Buffer {
  return Buffer.from(hkdfSync('sha256', Buffer.from(noticeKeySecret, 'utf8'), Buffer.alloc(0), KEY_LABEL, 32));
}

/** A new Standard Webhooks secret: `whsec_` + 32 random bytes in base64. */
export function mintWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The secret sealed with AES-256-GCM, bound to its endpoint and key id. */
export function sealWebhookSecret({
  secret,
  endpointId,
  keyId,
  noticeKeySecret,
}: {
  secret: string;
  endpointId: string;
  keyId: string;
  noticeKeySecret: string;
}): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', sealingKey(noticeKeySecret), iv);
  cipher.setAAD(Buffer.from(`${endpointId}:${keyId}`, 'utf8'));
  const body = Buffer.concat([cipher.update(secret, 'utf8'), cipher.final()]);
  return ['v1', iv.toString('base64url'), cipher.getAuthTag().toString('base64url'), body.toString('base64url')].join('.');
}

export function openWebhookSecret({
  sealed,
  endpointId,
  keyId,
  noticeKeySecret,
}: {
  sealed: string;
  endpointId: string;
  keyId: string;
  noticeKeySecret: string;
}): string | null {
  const [version, iv, tag, body] = sealed.split('.');
  if (version !== 'v1' || !iv || !tag || body === undefined) return null;
  try {
    const decipher = createDecipheriv('aes-256-gcm', sealingKey(noticeKeySecret), Buffer.from(iv, 'base64url'));
    decipher.setAAD(Buffer.from(`${endpointId}:${keyId}`, 'utf8'));
    decipher.setAuthTag(Buffer.from(tag, 'base64url'));
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8');
  } catch {
    return null;
  }
}

/** The secrets that sign now: every key whose overlap has not ended, newest first. */
export function signingSecrets(secrets: readonly SealedWebhookSecret[], now: Date): SealedWebhookSecret[] {
  return secrets.filter((s) => s.expiresAt === null || new Date(s.expiresAt) > now);
}
