import type { Metadata } from 'next';
import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import { getDb } from '@/lib/process-db';
import { can } from '@/lib/auth/permissions';
import { listReplaysContract } from '@/lib/api/console/replays';
import { listReplayViews } from '@/lib/replay/view';
import { configuredNoticeTypeNames, noticeTypeLabel } from '@/lib/windows/active';
import { ReplaysView } from '@/components/replays/replays-view';
import { Forbidden } from '@/components/ui/states';
import { requirePage } from '@/app/_server/auth';
import { prefetchConsole } from '@/app/_server/prefetch';

export const metadata: Metadata = { title: 'Replays' };
export const dynamic = 'force-dynamic';

export default async function ReplaysPage() {
  const auth = await requirePage('replay.read', '/replays');
  if (!auth.ok) return <Forbidden message={auth.refusal.message} />;
  const { user } = auth.session;
  // The configured notice types, read here on the server: the form in the browser cannot read NOTICE_CONFIG.
  const noticeTypes = configuredNoticeTypeNames().map((name) => ({ name, label: noticeTypeLabel(name) }));
  const client = new QueryClient();
  await prefetchConsole(client, listReplaysContract, {}, () => listReplayViews(getDb(), { limit: 50 }));
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Replays</h1>
          <p>
            Re-enqueue a backlog after an incident: dry-run, request with a reason, a different manager approves, then run at the per-domain rate and watch it.
          </p>
        </div>
      </div>
      <HydrationBoundary state={dehydrate(client)}>
        <ReplaysView
          viewer={{ id: user.id, canRequest: can(user.role, 'replay.request'), canApprove: can(user.role, 'replay.approve') }}
          noticeTypes={noticeTypes}
        />
      </HydrationBoundary>
    </>
  );
}
