import type { JobRow } from '@/db/schema';
import { planRetry, type RetryPlan } from './backoff';
import type { QuietWindow } from '@/lib/windows/quiet-hours';
import { sendOpensAt } from '@/lib/windows/verdict';

export type RetryBudgetSettings = { retryBaseMs: number; retryCapMs: number; maxAttempts: number };

/** planRetry (./backoff.ts) for a job whose attempt just failed for now: its window, category, quiet hours and count. */
export function planJobRetry({
  job,
  now,
  settings,
  quietHours,
}: {
  job: Pick<JobRow, 'attempts' | 'dueAt' | 'windowEarliest' | 'deadlineAt' | 'category' | 'recipientTimeZone'>;
  now: Date;
  settings: RetryBudgetSettings;
  quietHours: QuietWindow | null;
}): RetryPlan {
  return planRetry({
    now,
    attempts: job.attempts + 1,
    maxAttempts: settings.maxAttempts,
    baseMs: settings.retryBaseMs,
    capMs: settings.retryCapMs,
    window: { opensAt: sendOpensAt(job), deadlineAt: job.deadlineAt },
    category: job.category,
    quiet: quietHours ? { window: quietHours, timeZone: job.recipientTimeZone } : null,
  });
}
