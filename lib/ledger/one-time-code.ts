import { createHmac, randomBytes } from 'node:crypto';

/**
 * The credential a notice carries (a one-time code and a signed cancellation link). It is
 * minted once, at the notice's first claim, stored on the ledger row and reused by every
 * deliberate resend: minting a new one would silently break the email already delivered.
 */
export function mintOneTimeCode(): string {
  // 10 base32-ish characters people can type; 50 bits is plenty for a code bound to one notice.
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  const bytes = randomBytes(10);
  return Array.from(bytes, (byte) => alphabet[byte % alphabet.length]).join('');
}

/** A cancellation link bound to this notice and code: HMAC over both, so neither can be swapped. */
export function cancellationUrl({ secret, baseUrl, correlation, code }: { secret: string; baseUrl: string; correlation: string; code: string }): string {
  const signature = createHmac('sha256', secret).update(`cancel/v1:${correlation}:${code}`, 'utf8').digest('base64url');
  const url = new URL('/cancel', baseUrl);
  url.searchParams.set('n', correlation);
  url.searchParams.set('c', code);
  url.searchParams.set('s', signature);
  return url.toString();
}
