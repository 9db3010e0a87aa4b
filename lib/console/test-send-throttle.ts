import type pg from 'pg';
import { createWindowThrottle, type Admission } from '@/lib/throttle';

/**
 * Template test-sends per console user, a window throttle (lib/throttle.ts) under its own key
 * prefix, as the recipient page's and the sign-in limits are. A test goes to any address the
 * operator types through the real relay: without a limit one session could mail an address
 * thousands of times from the product's own domain.
 */
export type TestSendThrottle = { admit: (actor: string) => Promise<Admission> };

export const TEST_SEND_KEY_PREFIX = 'template-test-send';

export function createTestSendThrottle({ pool, limit, windowMs }: { pool: pg.Pool; limit: number; windowMs: number }): TestSendThrottle {
  const sends = createWindowThrottle({ pool, keyPrefix: TEST_SEND_KEY_PREFIX, points: limit, windowMs });
  return { admit: (actor) => sends.admit(actor.toLowerCase()) };
}
