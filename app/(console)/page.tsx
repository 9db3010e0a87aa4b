import type { Metadata } from 'next';
import { after } from 'next/server';
import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import { getDb } from '@/db/client';
import { config } from '@/lib/config';
import { loadPendingOverview, loadSeriesOverview, loadStatusOverview } from '@/lib/console/overview';
import { rangeQuery } from '@/lib/console/requests';
import { OverviewDashboard } from '@/components/overview/overview-dashboard';
import { queryKeys } from '@/components/query/keys';
import { Forbidden } from '@/components/ui/states';
import { requirePage } from '../_server/auth';

export const metadata: Metadata = { title: 'Overview' };
export const dynamic = 'force-dynamic';

export default async function OverviewPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const auth = await requirePage('overview.read', '/');
  if (!auth.ok) return <Forbidden message={auth.error.message} />;
  const parsed = rangeQuery.safeParse(await searchParams);
  const range = parsed.success ? parsed.data.range : '24h';
  const db = getDb();
  const now = new Date();
  const client = new QueryClient();
  await Promise.all([
    client.prefetchQuery({ queryKey: queryKeys.pending(), queryFn: () => loadPendingOverview(db, { now, recountLater: after }) }),
    client.prefetchQuery({ queryKey: queryKeys.series(range), queryFn: () => loadSeriesOverview(db, { now, range }) }),
    client.prefetchQuery({ queryKey: queryKeys.status(), queryFn: () => loadStatusOverview(db, { now, quarantineAfterMs: config().QUARANTINE_AFTER }) }),
  ]);
  return (
    <HydrationBoundary state={dehydrate(client)}>
      <OverviewDashboard initialRange={range} />
    </HydrationBoundary>
  );
}
