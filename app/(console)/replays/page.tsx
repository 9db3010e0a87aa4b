import type { Metadata } from 'next';
import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import { getDb } from '@/db/client';
import { can } from '@/lib/auth/permissions';
import { listReplayViews } from '@/lib/replay/view';
import { replaysKey } from '@/components/replays/keys';
import { ReplaysView } from '@/components/replays/replays-view';
import { Forbidden } from '@/components/ui/states';
import { requirePage } from '../../_server/auth';

export const metadata: Metadata = { title: 'Replays' };
export const dynamic = 'force-dynamic';

export default async function ReplaysPage() {
  const auth = await requirePage('replay.read', '/replays');
  if (!auth.ok) return <Forbidden message={auth.error.message} />;
  const { user } = auth.session;
  const client = new QueryClient();
  await client.prefetchQuery({ queryKey: replaysKey, queryFn: async () => JSON.parse(JSON.stringify(await listReplayViews(getDb(), { limit: 50 }))) as unknown });
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Replays</h1>
          <p>Re-enqueue a backlog after an incident: dry-run, request with a reason, a different manager approves, then run at the per-domain rate and watch it.</p>
        </div>
      </div>
      <HydrationBoundary state={dehydrate(client)}>
        <ReplaysView viewer={{ id: user.id, canRequest: can(user.role, 'replay.request'), canApprove: can(user.role, 'replay.approve') }} />
      </HydrationBoundary>
    </>
  );
}
