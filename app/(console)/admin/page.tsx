import type { Metadata } from 'next';
import Link from 'next/link';
import { dehydrate, HydrationBoundary, QueryClient } from '@tanstack/react-query';
import { getDb } from '@/lib/process-db';
import { can } from '@/lib/auth/permissions';
import { listTokensContract } from '@/lib/api/console/tokens';
import { listUsersContract } from '@/lib/api/console/users';
import { loadTokens } from '@/lib/console/tokens';
import { loadUsersPage } from '@/lib/console/users';
import { TokensAdmin } from '@/components/admin/tokens-admin';
import { UsersAdmin } from '@/components/admin/users-admin';
import { Forbidden } from '@/components/ui/states';
import { requirePage } from '@/app/_server/auth';
import { prefetchConsole } from '@/app/_server/prefetch';

export const metadata: Metadata = { title: 'Admin' };
export const dynamic = 'force-dynamic';

export default async function AdminPage() {
  const auth = await requirePage('users.manage', '/admin');
  if (!auth.ok) return <Forbidden message={auth.refusal.message} />;
  const client = new QueryClient();
  const tokens = can(auth.session.user.role, 'tokens.manage');
  await Promise.all([
    prefetchConsole(client, listUsersContract, {}, () => loadUsersPage(getDb(), {})),
    tokens ? prefetchConsole(client, listTokensContract, {}, () => loadTokens(getDb())) : Promise.resolve(),
  ]);
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Admin</h1>
          <p>
            Console users and producer API tokens. Every change is audited. <Link href="/admin/notice-types">Notice types and rules (read-only) →</Link>{' '}
            <Link href="/admin/templates">Templates →</Link>
          </p>
        </div>
      </div>
      <HydrationBoundary state={dehydrate(client)}>
        <UsersAdmin selfId={auth.session.user.id} />
        {tokens ? <TokensAdmin /> : null}
      </HydrationBoundary>
    </>
  );
}
