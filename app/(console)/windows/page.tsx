import type { Metadata } from 'next';
import Link from 'next/link';
import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import { getDb } from '@/lib/process-db';
import { can } from '@/lib/auth/permissions';
import { config } from '@/lib/config';
import { gapPageQuery, getWindowsSummary, jobPageQuery, listAtRisk, listGaps, listMissed, windowTabs, type WindowTab } from '@/lib/api/console/windows';
import { loadAtRiskPage, loadGapPage, loadMissedPage, loadWindowsSummary } from '@/lib/console/windows';
import { formatHours } from '@/lib/console/format';
import { WindowsView, type WindowsQuery } from '@/components/windows/windows-view';
import { Forbidden } from '@/components/ui/states';
import { requirePage } from '@/app/_server/auth';
import { prefetchConsole } from '@/app/_server/prefetch';

export const metadata: Metadata = { title: 'Send windows' };
export const dynamic = 'force-dynamic';

export default async function WindowsPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const auth = await requirePage('windows.read', '/windows');
  if (!auth.ok) return <Forbidden message={auth.refusal.message} />;
  const params = await searchParams;
  const tab: WindowTab = (windowTabs as readonly string[]).includes(params.tab ?? '') ? (params.tab as WindowTab) : 'at-risk';
  const cursor = { afterAt: params.afterAt, afterId: params.afterId };
  const jobCursor = jobPageQuery.safeParse(cursor);
  const gapCursor = gapPageQuery.safeParse(cursor);
  const valid = tab === 'gaps' ? gapCursor.success : jobCursor.success;
  const query: WindowsQuery = valid && cursor.afterAt && cursor.afterId ? { tab, afterAt: cursor.afterAt, afterId: cursor.afterId } : { tab };
  const db = getDb();
  const now = new Date();
  const atRiskWithinMs = config().WINDOW_AT_RISK_WITHIN;
  const retryCeiling = config().MAX_ATTEMPTS;
  const client = new QueryClient();
  const input = { afterAt: query.afterAt, afterId: query.afterId };
  await Promise.all([
    prefetchConsole(client, getWindowsSummary, {}, () => loadWindowsSummary(db, { now, atRiskWithinMs, retryCeiling })),
    tab === 'at-risk' ? prefetchConsole(client, listAtRisk, input, () => loadAtRiskPage(db, { now, atRiskWithinMs, input, retryCeiling })) : null,
    tab === 'missed' ? prefetchConsole(client, listMissed, input, () => loadMissedPage(db, { now, input })) : null,
    tab === 'gaps' && gapCursor.success
      ? prefetchConsole(client, listGaps, { afterAt: query.afterAt, afterId: query.afterId === undefined ? undefined : Number(query.afterId) }, () =>
          loadGapPage(db, { now, input: gapCursor.data }),
        )
      : null,
  ]);
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Send windows</h1>
          <p>
            Notices due and not sent whose window closes within {formatHours(atRiskWithinMs)}, windows missed, and required notices that could not be planned.{' '}
            {can(auth.session.user.role, 'notice_config.read') ? <Link href="/admin/notice-types">Notice types and rules →</Link> : null}
          </p>
        </div>
      </div>
      {!valid ? <div className="notice error">The page cursor was not understood and has been ignored.</div> : null}
      <HydrationBoundary state={dehydrate(client)}>
        <WindowsView query={query} canResolve={can(auth.session.user.role, 'gaps.resolve')} />
      </HydrationBoundary>
    </>
  );
}
