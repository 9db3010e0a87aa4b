import type { Metadata } from 'next';
import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import { getDb } from '@/lib/process-db';
import { config } from '@/lib/config';
import { lookupNotices } from '@/lib/console/lookup';
import { lookupNoticesContract } from '@/lib/api/console/lookup';
import { LookupView } from '@/components/lookup/lookup-view';
import { Forbidden } from '@/components/ui/states';
import { requirePage } from '@/app/_server/auth';
import { prefetchConsole } from '@/app/_server/prefetch';

export const metadata: Metadata = { title: 'Lookup' };
export const dynamic = 'force-dynamic';

export default async function LookupPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const q = ((await searchParams).q ?? '').trim().slice(0, 320);
  const auth = await requirePage('lookup.read', q ? `/lookup?q=${encodeURIComponent(q)}` : '/lookup');
  if (!auth.ok) return <Forbidden message={auth.refusal.message} />;
  const client = new QueryClient();
  if (q) {
    const result = await lookupNotices(getDb(), { query: q, secret: config().NOTICE_KEY_SECRET, messageIdDomain: config().MESSAGE_ID_DOMAIN });
    // A refused query is not prefetched: the client asks the route and shows its refusal.
    if (result.ok) await prefetchConsole(client, lookupNoticesContract, { q }, async () => result.data);
  }
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Lookup</h1>
          <p>Why did this customer get this email or text, twice, or not at all?</p>
        </div>
      </div>
      <HydrationBoundary state={dehydrate(client)}>
        <LookupView q={q} />
      </HydrationBoundary>
    </>
  );
}
