import type pg from 'pg';
import { throttleKeyOf } from '@/lib/auth/client-address';
import { createWindowThrottle, type Admission } from '@/lib/throttle';

/**
 * The recipient page's limits (window throttles: lib/throttle.ts, shared by every console
 * process) under their own key prefixes: requests per client address (before the link is even
 * verified), requests per notice (after: a verified link's notice key, so a flood of forged
 * tokens creates no per-token rows), and wrong one-time codes per notice. A counter is the only
 * thing a refused request may write.
 */
export type RecipientThrottle = {
  /** Counts one request from `address` (its /64 for IPv6); refused once over the limit. */
  admitAddress: (address: string) => Promise<Admission>;
  /** Counts one request for a verified link's notice. */
  admitNotice: (noticeKey: string) => Promise<Admission>;
  /** How long code entry stays refused for this notice, or null while it has attempts left. */
  codeRefusal: (noticeKey: string) => Promise<{ retryInMs: number } | null>;
  countCodeFailure: (noticeKey: string) => Promise<void>;
};

export const RECIPIENT_KEY_PREFIXES = { address: 'recipient-address', notice: 'recipient-notice', code: 'recipient-code' } as const;

export type RecipientLimits = { perAddress: number; perNotice: number; codeAttempts: number; windowMs: number };

export function createRecipientThrottle({ pool, limits }: { pool: pg.Pool; limits: RecipientLimits }): RecipientThrottle {
  const bucket = (keyPrefix: string, points: number) => createWindowThrottle({ pool, keyPrefix, points, windowMs: limits.windowMs });
  const byAddress = bucket(RECIPIENT_KEY_PREFIXES.address, limits.perAddress);
  const byNotice = bucket(RECIPIENT_KEY_PREFIXES.notice, limits.perNotice);
  const codes = bucket(RECIPIENT_KEY_PREFIXES.code, limits.codeAttempts);
  return {
    admitAddress: (address) => byAddress.admit(throttleKeyOf(address)),
    admitNotice: (noticeKey) => byNotice.admit(noticeKey),
    codeRefusal: async (noticeKey) => {
      const state = await codes.peek(noticeKey);
      if (!state || state.consumed < limits.codeAttempts) return null;
      return { retryInMs: state.resetInMs };
    },
    countCodeFailure: async (noticeKey) => {
      await codes.count(noticeKey);
    },
  };
}
