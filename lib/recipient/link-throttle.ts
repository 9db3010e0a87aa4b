import type pg from 'pg';
import { throttleKeyOf } from '@/lib/auth/client-address';
import { createWindowThrottle, type Admission } from '@/lib/throttle';

/**
 * The rate limit of the recipient's links, shared by every console process (window throttles:
 * lib/throttle.ts). Two buckets: per notice (a genuine link hammered: a scanner in a loop) and
 * per client address when TRUSTED_PROXY_HOPS lets us know it (one client walking many links).
 * Only a request whose token verified is counted per notice, so a forged link costs no write at
 * all. Generous: a mailbox provider's one-click POSTs for many recipients come from few addresses.
 */
export const LINK_LIMITS = {
  perNotice: { points: 20, windowSeconds: 600 },
  perAddress: { points: 300, windowSeconds: 60 },
} as const;

export type LinkThrottle = {
  /** Counts one request; null when allowed, else how long to wait. */
  take: (key: { noticeKey?: string; address?: string | null }) => Promise<{ retryInMs: number } | null>;
};

export function createLinkThrottle(pool: pg.Pool): LinkThrottle {
  const bucket = (keyPrefix: string, { points, windowSeconds }: { points: number; windowSeconds: number }) =>
    createWindowThrottle({ pool, keyPrefix, points, windowMs: windowSeconds * 1000 });
  const perNotice = bucket('recipient-link-notice', LINK_LIMITS.perNotice);
  const perAddress = bucket('recipient-link-address', LINK_LIMITS.perAddress);
  const refusal = (admission: Admission) => (admission.ok ? null : { retryInMs: admission.retryInMs });
  return {
    take: async ({ noticeKey, address }) => {
      if (address) {
        const refused = refusal(await perAddress.admit(throttleKeyOf(address)));
        if (refused) return refused;
      }
      return noticeKey ? refusal(await perNotice.admit(noticeKey)) : null;
    },
  };
}
