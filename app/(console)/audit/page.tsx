import type { Metadata } from 'next';
import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import { getDb } from '@/lib/process-db';
import { loadAuditPage } from '@/lib/console/audit-view';
import { auditQuery, listAudit } from '@/lib/api/console/audit';
import { AuditView, type AuditQuery } from '@/components/audit/audit-view';
import { Forbidden } from '@/components/ui/states';
import { requirePage } from '@/app/_server/auth';
import { prefetchConsole } from '@/app/_server/prefetch';

export const metadata: Metadata = { title: 'Audit' };
export const dynamic = 'force-dynamic';

export default async function AuditPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const auth = await requirePage('audit.read', '/audit');
  if (!auth.ok) return <Forbidden message={auth.refusal.message} />;
  const raw = Object.fromEntries(Object.entries(await searchParams).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = auditQuery.safeParse(raw);
  const query: AuditQuery = parsed.success ? parsed.data : {};
  const client = new QueryClient();
  await prefetchConsole(client, listAudit, query, () => loadAuditPage(getDb(), query));
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Audit log</h1>
          <p>Who did what, when and why. Read-only for everyone; entries are never edited.</p>
        </div>
      </div>
      <HydrationBoundary state={dehydrate(client)}>
        <AuditView query={query} />
      </HydrationBoundary>
    </>
  );
}
