import type { Metadata } from 'next';
import { after } from 'next/server';
import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import { getDb } from '@/lib/process-db';
import { config } from '@/lib/config';
import { getWakeupPublisher } from '@/lib/queue';
import { loadPendingOverview, loadStatusOverview } from '@/lib/console/overview';
import { getChartsOverview, getPendingOverview, getStatusOverview, rangeQuery } from '@/lib/api/console/overview';
import { loadOverviewCharts } from '@/lib/console/overview-charts';
import { getWindowsSummary } from '@/lib/api/console/windows';
import { loadWindowsSummary } from '@/lib/console/windows';
import { OverviewDashboard } from '@/components/overview/overview-dashboard';
import { Forbidden } from '@/components/ui/states';
import { requirePage } from '@/app/_server/auth';
import { prefetchConsole } from '@/app/_server/prefetch';

export const metadata: Metadata = { title: 'Overview' };
export const dynamic = 'force-dynamic';

export default async function OverviewPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const auth = await requirePage('overview.read', '/');
  if (!auth.ok) return <Forbidden message={auth.refusal.message} />;
  const parsed = rangeQuery.safeParse(await searchParams);
  const range = parsed.success ? parsed.data.range : '24h';
  const db = getDb();
  const now = new Date();
  const client = new QueryClient();
  await Promise.all([
    prefetchConsole(client, getPendingOverview, {}, () => loadPendingOverview(db, { now, recountLater: after })),
    prefetchConsole(client, getChartsOverview, { range }, () => loadOverviewCharts(db, { now, range })),
    prefetchConsole(client, getStatusOverview, {}, () =>
      loadStatusOverview(db, {
        now,
        quarantineAfterMs: config().QUARANTINE_AFTER,
        atRiskWithinMs: config().WINDOW_AT_RISK_WITHIN,
        retryCeiling: config().MAX_ATTEMPTS,
        countDeadLettered: async () => (await getWakeupPublisher()).deadLetteredCount(),
      }),
    ),
    prefetchConsole(client, getWindowsSummary, {}, () =>
      loadWindowsSummary(db, { now, atRiskWithinMs: config().WINDOW_AT_RISK_WITHIN, retryCeiling: config().MAX_ATTEMPTS }),
    ),
  ]);
  return (
    <HydrationBoundary state={dehydrate(client)}>
      <OverviewDashboard initialRange={range} />
    </HydrationBoundary>
  );
}
