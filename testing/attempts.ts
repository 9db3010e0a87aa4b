import { and, eq } from 'drizzle-orm';
import { expect, vi } from 'vitest';
import type { DbOrTx } from '@/db/client';
import { deliveryAttempts } from '@/db/schema';

/**
 * Waits until `workerId` has handled the job at least once (a redelivery, perhaps the sweeper's
 * wake-up too) and every one of its attempts had `outcome`: the crash tests' "the next worker
 * refused it, or sent it, and nothing else". Vitest only.
 */
export async function waitForAttemptsBy(db: DbOrTx, { jobId, workerId, outcome }: { jobId: string; workerId: string; outcome: string }): Promise<void> {
  await vi.waitFor(
    async () => {
      const rows = await db
        .select({ outcome: deliveryAttempts.outcome })
        .from(deliveryAttempts)
        .where(and(eq(deliveryAttempts.jobId, jobId), eq(deliveryAttempts.workerId, workerId)));
      expect(rows.length).toBeGreaterThan(0);
      expect(new Set(rows.map((row) => row.outcome))).toEqual(new Set([outcome]));
    },
    { timeout: 30_000, interval: 200 },
  );
}
