import type { ReactNode } from 'react';
import Link from 'next/link';
import { redirect } from 'next/navigation';
import { getDb } from '@/lib/process-db';
import { countQuarantined } from '@/db/queries/ledger/read';
import { countComplianceGaps } from '@/db/queries/windows';
import { listTransportsDown } from '@/db/queries/transport-status';
import { can } from '@/lib/auth/permissions';
import { roleLabels } from '@/lib/auth/roles';
import { config } from '@/lib/config';
import { SignOutButton } from '@/components/auth/sign-out-button';
import { Nav, type NavItem } from '@/components/ui/nav';
import { TransportBanner } from '@/components/ui/transport-banner';
import { currentSession } from '@/app/_server/auth';

export const dynamic = 'force-dynamic';

export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const session = await currentSession();
  if (!session) redirect('/signin');
  const role = session.user.role;
  const [quarantined, gaps, transportsDown] = await Promise.all([
    can(role, 'quarantine.read') ? countQuarantined(getDb(), { quarantineAfterMs: config().QUARANTINE_AFTER }) : 0,
    can(role, 'windows.read') ? countComplianceGaps(getDb()).then((rows) => rows.reduce((sum, row) => sum + row.count, 0)) : 0,
    listTransportsDown(getDb()),
  ]);
  const items: NavItem[] = [
    { href: '/', label: 'Overview' },
    ...(can(role, 'lookup.read') ? [{ href: '/lookup', label: 'Lookup' }] : []),
    ...(can(role, 'lookup.read') ? [{ href: '/recipients', label: 'Recipients' }] : []),
    ...(can(role, 'quarantine.read') ? [{ href: '/quarantine', label: 'Quarantine', badge: quarantined }] : []),
    ...(can(role, 'failures.read') ? [{ href: '/failures', label: 'Failures' }] : []),
    ...(can(role, 'windows.read') ? [{ href: '/windows', label: 'Windows', badge: gaps, badgeTitle: `${gaps} open compliance gaps` }] : []),
    ...(can(role, 'replay.read') ? [{ href: '/replays', label: 'Replays' }] : []),
    ...(can(role, 'reports.read') ? [{ href: '/reports', label: 'Reports' }] : []),
    ...(can(role, 'audit.read') ? [{ href: '/audit', label: 'Audit' }] : []),
    ...(can(role, 'users.manage') || can(role, 'tokens.manage') ? [{ href: '/admin', label: 'Admin' }] : []),
  ];
  return (
    <>
      <header className="shell-header">
        <div className="shell-header-inner">
          <Link href="/" className="brand">
            notice-ledger<small>console</small>
          </Link>
          <Nav items={items} />
          <div className="who" data-testid="who">
            <Link href="/account" className="name" title="Your account: change your password" data-testid="nav-account">
              {session.user.email}
            </Link>
            <span className="role" data-testid="who-role">
              {roleLabels[role]}
            </span>
            <SignOutButton />
          </div>
        </div>
      </header>
      <main>
        <TransportBanner
          down={transportsDown.map((row) => ({
            transport: row.transport,
            reason: row.reason,
            errorClass: row.errorClass,
            code: row.code,
            since: row.since.toISOString(),
            checkedAt: row.checkedAt.toISOString(),
          }))}
        />
        {children}
      </main>
    </>
  );
}
