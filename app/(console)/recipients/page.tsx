import type { Metadata } from 'next';
import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import { getDb } from '@/lib/process-db';
import { can } from '@/lib/auth/permissions';
import { getRecipient, recipientQuery } from '@/lib/api/console/recipients';
import { loadRecipientView } from '@/lib/console/recipients';
import { RecipientPanel } from '@/components/recipients/recipient-view';
import { Forbidden } from '@/components/ui/states';
import { requirePage } from '@/app/_server/auth';
import { prefetchConsole } from '@/app/_server/prefetch';

export const metadata: Metadata = { title: 'Recipient' };
export const dynamic = 'force-dynamic';

export default async function RecipientPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const raw = ((await searchParams).email ?? '').trim().slice(0, 320);
  const auth = await requirePage('lookup.read', raw ? `/recipients?email=${encodeURIComponent(raw)}` : '/recipients');
  if (!auth.ok) return <Forbidden message={auth.refusal.message} />;
  const parsed = recipientQuery.safeParse({ email: raw });
  const email = parsed.success ? parsed.data.email : raw;
  const client = new QueryClient();
  if (parsed.success) await prefetchConsole(client, getRecipient, { email }, () => loadRecipientView(getDb(), { email }));
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Recipient</h1>
          <p>What this customer receives, what they have opted out of, and what is still on its way to them.</p>
        </div>
      </div>
      <HydrationBoundary state={dehydrate(client)}>
        <RecipientPanel email={email} canManage={can(auth.session.user.role, 'recipients.manage')} />
      </HydrationBoundary>
    </>
  );
}
