import type { Metadata } from 'next';
import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import { getDb } from '@/lib/process-db';
import { can } from '@/lib/auth/permissions';
import { config } from '@/lib/config';
import { configuredNoticeTypeNames } from '@/lib/windows/active';
import { checkNoticeTypesAgainst } from '@/lib/api/fields';
import { failuresQuery, listFailuresContract, type FailuresQuery } from '@/lib/api/console/failures';
import { loadFailuresPage } from '@/lib/console/failures';
import { FailuresView } from '@/components/failures/failures-view';
import { Forbidden } from '@/components/ui/states';
import { requirePage } from '@/app/_server/auth';
import { prefetchConsole } from '@/app/_server/prefetch';

export const metadata: Metadata = { title: 'Failures' };
export const dynamic = 'force-dynamic';

/** The filter form's `datetime-local` fields carry no offset: on this page they are UTC. */
const asInstant = (value: string) => (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(value) ? `${value}:00Z` : value);

export default async function FailuresPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const auth = await requirePage('failures.read', '/failures');
  if (!auth.ok) return <Forbidden message={auth.refusal.message} />;
  const raw = Object.fromEntries(
    Object.entries(await searchParams)
      .filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== '')
      .map(([key, value]) => [key, key === 'from' || key === 'to' ? asInstant(value) : value]),
  );
  checkNoticeTypesAgainst(configuredNoticeTypeNames);
  const parsed = failuresQuery.safeParse(raw);
  const query: FailuresQuery = parsed.success ? parsed.data : {};
  const client = new QueryClient();
  const approvalAbove = config().BULK_RETRY_APPROVAL_ABOVE;
  await prefetchConsole(client, listFailuresContract, query, () => loadFailuresPage(getDb(), { now: new Date(), input: query, approvalAbove }));
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Failures</h1>
          <p>
            Notices that failed, are being retried, are held past their due time, or missed their window, with the reason in words. A failed notice whose window
            is still open can be retried, one at a time or in bulk after an outage.
          </p>
        </div>
      </div>
      {!parsed.success ? <div className="notice error">The filter was not understood and has been ignored: {parsed.error.issues[0]?.message}</div> : null}
      <HydrationBoundary state={dehydrate(client)}>
        <FailuresView query={query} canRetry={can(auth.session.user.role, 'failures.retry')} noticeTypes={configuredNoticeTypeNames()} />
      </HydrationBoundary>
    </>
  );
}
