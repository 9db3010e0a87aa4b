import type { TimeRange } from '@/lib/console/overview-model';

/** Query keys shared by the server prefetch and the client hooks, so hydration lands on the same entry. */
export const queryKeys = {
  pending: () => ['overview', 'pending'] as const,
  series: (range: TimeRange) => ['overview', 'series', range] as const,
  status: () => ['overview', 'status'] as const,
  lookup: (q: string) => ['lookup', q] as const,
  quarantine: (query: Record<string, string | number | undefined>) => ['quarantine', query] as const,
  audit: (query: Record<string, string | number | undefined>) => ['audit', query] as const,
  users: (after: string | undefined) => ['users', after ?? ''] as const,
};

/** Live refresh: the overview and quarantine poll; an on-call screen left open stays true. */
export const LIVE_REFRESH_MS = 15_000;
