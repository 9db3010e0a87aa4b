'use client';

import { useSuspenseQuery } from '@tanstack/react-query';
import type { PendingOverview, SeriesOverview, StatusOverview } from '@/lib/console/overview';
import type { TimeRange } from '@/lib/console/overview-model';
import { getJson } from '../query/api';
import { LIVE_REFRESH_MS, queryKeys } from '../query/keys';

export function usePending() {
  return useSuspenseQuery({ queryKey: queryKeys.pending(), queryFn: () => getJson<PendingOverview>('/api/console/overview/pending'), refetchInterval: LIVE_REFRESH_MS });
}

export function useSeries(range: TimeRange) {
  return useSuspenseQuery({ queryKey: queryKeys.series(range), queryFn: () => getJson<SeriesOverview>(`/api/console/overview/series?range=${range}`), refetchInterval: LIVE_REFRESH_MS });
}

export function useStatus() {
  return useSuspenseQuery({ queryKey: queryKeys.status(), queryFn: () => getJson<StatusOverview>('/api/console/overview/status'), refetchInterval: LIVE_REFRESH_MS });
}
