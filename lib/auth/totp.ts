import { createHash, randomInt } from 'node:crypto';
import { authenticator } from 'otplib';

/** RFC 6238 as authenticator apps speak it: SHA-1, 6 digits, 30 s steps. */
export const TOTP_STEP_S = 30;
/** One step either side: a phone clock up to ~30 s off, or a code typed as it turned, still works. */
export const TOTP_WINDOW = 1;
export const RECOVERY_CODE_COUNT = 10;
export const TOTP_ISSUER = 'notice-ledger';

function authenticatorAt(now: Date) {
  return authenticator.clone({ epoch: now.getTime(), step: TOTP_STEP_S, window: TOTP_WINDOW, digits: 6 });
}

/** A new secret, base32, 160 bits (RFC 4226's recommended length). */
export function newTotpSecret(): string {
  return authenticator.generateSecret(20);
}

export function otpauthUri({ email, secret }: { email: string; secret: string }): string {
  return authenticator.keyuri(email, TOTP_ISSUER, secret);
}

/** The code an authenticator shows at `now` (tests and the demo). */
export function totpCodeAt({ secret, now }: { secret: string; now: Date }): string {
  return authenticatorAt(now).generate(secret);
}

export function totpStepAt(now: Date): number {
  return Math.floor(now.getTime() / (TOTP_STEP_S * 1000));
}

/**
 * The step a code belongs to, when it is valid within the window at `now` and later than the
 * last step accepted for this secret; null otherwise. Refusing a step at or before the last one
 * means a code seen over a shoulder or in a proxy log cannot be used again (RFC 6238 §5.2).
 */
export function acceptedTotpStep({ secret, code, now, lastStep }: { secret: string; code: string; now: Date; lastStep: number | null }): number | null {
  if (!/^\d{6}$/.test(code)) return null;
  const delta = authenticatorAt(now).checkDelta(code, secret);
  if (delta === null) return null;
  const step = totpStepAt(now) + delta;
  if (lastStep !== null && step <= lastStep) return null;
  return step;
}

/** Lower-case base32 without the look-alikes, read and typed by people. */
const RECOVERY_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';

/** Ten codes of 2 × 5 characters (about 49 bits each), shown once; only their hashes are kept. */
export function newRecoveryCodes(): string[] {
  const part = () => Array.from({ length: 5 }, () => RECOVERY_ALPHABET[randomInt(RECOVERY_ALPHABET.length)]).join('');
  return Array.from({ length: RECOVERY_CODE_COUNT }, () => `${part()}-${part()}`);
}

/** What is typed, spaces, dashes and case aside. */
export function normalizeRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, '');
}

/** SHA-256 is enough: each code is random with ~49 bits, not a password someone chose. */
export function hashRecoveryCode(code: string): string {
  return createHash('sha256').update(normalizeRecoveryCode(code), 'utf8').digest('hex');
}

/** A six-digit code is a TOTP; ten recovery characters a recovery code; anything else neither. */
export function secondFactorKind(code: string): 'totp' | 'recovery' | null {
  const trimmed = code.trim();
  if (/^\d{6}$/.test(trimmed)) return 'totp';
  return /^[a-z0-9]{10}$/.test(normalizeRecoveryCode(trimmed)) ? 'recovery' : null;
}
