'use client';

import { useSuspenseQuery } from '@tanstack/react-query';
import { getChartsOverview, getPendingOverview, getStatusOverview } from '@/lib/api/console/overview';
import type { TimeRange } from '@/lib/api/console/overview';
import { consoleQuery } from '@/lib/http/client';
import { LIVE_REFRESH_MS } from '@/components/query/live';

export function usePending() {
  return useSuspenseQuery({ ...consoleQuery(getPendingOverview, {}), refetchInterval: LIVE_REFRESH_MS });
}

export function useStatus() {
  return useSuspenseQuery({ ...consoleQuery(getStatusOverview, {}), refetchInterval: LIVE_REFRESH_MS });
}

/** The charts over time, from the worker's stored samples. */
export function useCharts(range: TimeRange) {
  return useSuspenseQuery({ ...consoleQuery(getChartsOverview, { range }), refetchInterval: LIVE_REFRESH_MS });
}
