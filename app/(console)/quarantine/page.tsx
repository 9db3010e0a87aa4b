import type { Metadata } from 'next';
import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import { getDb } from '@/lib/process-db';
import { can } from '@/lib/auth/permissions';
import { config } from '@/lib/config';
import { configuredNoticeTypeNames } from '@/lib/windows/active';
import { loadQuarantinePage } from '@/lib/console/quarantine-view';
import { checkNoticeTypesAgainst } from '@/lib/api/fields';
import { listQuarantine, quarantineListQuery } from '@/lib/api/console/quarantine';
import { formatDuration } from '@/lib/console/format';
import { QuarantineView, type QuarantineQuery } from '@/components/quarantine/quarantine-view';
import { Forbidden } from '@/components/ui/states';
import { requirePage } from '@/app/_server/auth';
import { prefetchConsole } from '@/app/_server/prefetch';

export const metadata: Metadata = { title: 'Quarantine' };
export const dynamic = 'force-dynamic';

export default async function QuarantinePage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const auth = await requirePage('quarantine.read', '/quarantine');
  if (!auth.ok) return <Forbidden message={auth.refusal.message} />;
  const raw = Object.fromEntries(Object.entries(await searchParams).filter(([, value]) => value !== undefined && value !== ''));
  // The filter's notice type is one of the operator's configured names (read here, on the server).
  checkNoticeTypesAgainst(configuredNoticeTypeNames);
  const parsed = quarantineListQuery.safeParse(raw);
  const query: QuarantineQuery = parsed.success ? parsed.data : {};
  const client = new QueryClient();
  await prefetchConsole(client, listQuarantine, query, () => loadQuarantinePage(getDb(), { query, quarantineAfterMs: config().QUARANTINE_AFTER }));
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Quarantine</h1>
          <p>
            Claims still <code>claimed</code> {formatDuration(config().QUARANTINE_AFTER)} after the claim: the worker may have died mid-send. Read the
            provider&apos;s evidence, then confirm, release or suppress.
          </p>
        </div>
      </div>
      {!parsed.success ? <div className="notice error">The filter was not understood and has been ignored: {parsed.error.issues[0]?.message}</div> : null}
      <HydrationBoundary state={dehydrate(client)}>
        <QuarantineView query={query} canResolve={can(auth.session.user.role, 'quarantine.resolve')} noticeTypes={configuredNoticeTypeNames()} />
      </HydrationBoundary>
    </>
  );
}
