import { randomBytes } from 'node:crypto';

/**
 * The credential a notice carries beside its signed recipient-page link (lib/recipient/page-link.ts). It is
 * minted once, for the notice's first claim (its message is composed with it just before), stored on the ledger row and reused by every
 * deliberate resend: minting a new one would silently break the email already delivered.
 */
export function mintOneTimeCode(): string {
  // 10 base32-ish characters people can type; 50 bits is plenty for a code bound to one notice.
  const alphabet = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
  const bytes = randomBytes(10);
  return Array.from(bytes, (byte) => alphabet[byte % alphabet.length]).join('');
}
