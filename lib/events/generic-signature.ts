import { createHmac, timingSafeEqual } from 'node:crypto';

/**
 * The signed JSON format our own SMTP sink (and any relay we write an adapter for) posts:
 * `X-Notice-Timestamp: <unix seconds>` and `X-Notice-Signature: v1=<hex HMAC-SHA256(secret,
 * timestamp + "." + rawBody)>`. The timestamp is inside the MAC, so a captured request
 * cannot be replayed outside the tolerance window by editing the header.
 */
export const GENERIC_TIMESTAMP_HEADER = 'x-notice-timestamp';
export const GENERIC_SIGNATURE_HEADER = 'x-notice-signature';
export const GENERIC_TOLERANCE_SECONDS = 300;

export function genericSignature({ secret, timestamp, body }: { secret: string; timestamp: number; body: string }): string {
  return `v1=${createHmac('sha256', secret).update(`${timestamp}.${body}`, 'utf8').digest('hex')}`;
}

export function signGenericRequest({ secret, body, now = new Date() }: { secret: string; body: string; now?: Date }): Record<string, string> {
  const timestamp = Math.floor(now.getTime() / 1000);
  return {
    'content-type': 'application/json',
    'X-Notice-Timestamp': String(timestamp),
    'X-Notice-Signature': genericSignature({ secret, timestamp, body }),
  };
}

export type SignatureCheck = { ok: true } | { ok: false; reason: 'missing' | 'malformed' | 'stale' | 'mismatch' };

export function verifyGenericSignature({
  secret,
  body,
  timestampHeader,
  signatureHeader,
  now = new Date(),
  toleranceSeconds = GENERIC_TOLERANCE_SECONDS,
}: {
  secret: string;
  body: string;
  timestampHeader: string | null;
  signatureHeader: string | null;
  now?: Date;
  toleranceSeconds?: number;
}): SignatureCheck {
  if (!timestampHeader || !signatureHeader) return { ok: false, reason: 'missing' };
  if (!/^\d{1,12}$/.test(timestampHeader)) return { ok: false, reason: 'malformed' };
  const timestamp = Number(timestampHeader);
  if (Math.abs(now.getTime() / 1000 - timestamp) > toleranceSeconds) return { ok: false, reason: 'stale' };
  // A header may carry several signatures during a secret rotation: `v1=aa…,v1=bb…`.
  const candidates = signatureHeader
    .split(',')
    .map((part) => part.trim())
    .filter((part) => /^v1=[0-9a-f]{64}$/.test(part));
  if (candidates.length === 0) return { ok: false, reason: 'malformed' };
  const expected = Buffer.from(genericSignature({ secret, timestamp, body }), 'utf8');
  const matches = candidates.some((candidate) => {
    const given = Buffer.from(candidate, 'utf8');
    return given.length === expected.length && timingSafeEqual(given, expected);
  });
  return matches ? { ok: true } : { ok: false, reason: 'mismatch' };
}
