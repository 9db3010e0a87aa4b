import type { ReactNode } from 'react';
import Link from 'next/link';
import { redirect } from 'next/navigation';
import { getDb } from '@/lib/process-db';
import { countQuarantined } from '@/db/queries/ledger/read';
import { countComplianceGaps } from '@/db/queries/windows';
import { listTransportsDown } from '@/db/queries/transport-status';
import { listRuntimeControls } from '@/db/queries/runtime-controls';
import { describePause, snapshotOf } from '@/lib/controls/runtime-controls';
import { PausedBanner } from '@/components/ui/paused-banner';
import { ShadowBanner } from '@/components/ui/shadow-banner';
import { can } from '@/lib/auth/permissions';
import { roleLabels } from '@/lib/auth/roles';
import { config } from '@/lib/config';
import { SignOutButton } from '@/components/auth/sign-out-button';
import { Nav, type NavItem } from '@/components/ui/nav';
import { TransportBanner } from '@/components/ui/transport-banner';
import { WebhookBanner } from '@/components/ui/webhook-banner';
import { loadTroubledEndpoints } from '@/lib/console/webhooks';
import { currentSession } from '@/app/_server/auth';

export const dynamic = 'force-dynamic';

export default async function ConsoleLayout({ children }: { children: ReactNode }) {
  const session = await currentSession();
  if (!session) redirect('/signin');
  const role = session.user.role;
  const [quarantined, gaps, transportsDown, controls, controlRows, troubledWebhooks] = await Promise.all([
    can(role, 'quarantine.read') ? countQuarantined(getDb(), { quarantineAfterMs: config().QUARANTINE_AFTER }) : 0,
    can(role, 'windows.read') ? countComplianceGaps(getDb()).then((rows) => rows.reduce((sum, row) => sum + row.count, 0)) : 0,
    listTransportsDown(getDb()),
    listRuntimeControls(getDb()),
    loadTroubledEndpoints(getDb()),
  ]).then(([quarantined, gaps, transportsDown, rows, troubled]) => [quarantined, gaps, transportsDown, snapshotOf(rows), rows, troubled] as const);
  const modeRow = controlRows.find((row) => row.name === 'ledger_mode');
  const shadow =
    (controls.ledgerMode ?? config().LEDGER_MODE) === 'shadow'
      ? { since: modeRow?.changedAt.toISOString() ?? null, changedBy: modeRow?.changedBy ?? null, stored: modeRow !== undefined }
      : null;
  const items: NavItem[] = [
    { href: '/', label: 'Overview' },
    ...(can(role, 'lookup.read') ? [{ href: '/lookup', label: 'Lookup' }] : []),
    ...(can(role, 'lookup.read') ? [{ href: '/recipients', label: 'Recipients' }] : []),
    ...(can(role, 'quarantine.read') ? [{ href: '/quarantine', label: 'Quarantine', badge: quarantined }] : []),
    ...(can(role, 'failures.read') ? [{ href: '/failures', label: 'Failures' }] : []),
    ...(can(role, 'windows.read') ? [{ href: '/windows', label: 'Windows', badge: gaps, badgeTitle: `${gaps} open compliance gaps` }] : []),
    ...(can(role, 'replay.read') ? [{ href: '/replays', label: 'Replays' }] : []),
    { href: '/rollout', label: 'Rollout' },
    { href: '/controls', label: 'Controls', badge: controls.pauses.length, badgeTitle: `${controls.pauses.length} pauses hold` },
    ...(can(role, 'reports.read') ? [{ href: '/reports', label: 'Reports' }] : []),
    ...(can(role, 'audit.read') ? [{ href: '/audit', label: 'Audit' }] : []),
    ...(can(role, 'webhooks.read')
      ? [{ href: '/webhooks', label: 'Webhooks', badge: troubledWebhooks.length, badgeTitle: `${troubledWebhooks.length} endpoints failing or disabled` }]
      : []),
    ...(can(role, 'users.manage') || can(role, 'tokens.manage') ? [{ href: '/admin', label: 'Admin' }] : []),
    { href: '/api-docs', label: 'API' },
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
        <ShadowBanner shadow={shadow} />
        <PausedBanner
          paused={controls.pauses.map((pause) => ({
            name: pause.name,
            label: describePause(pause.target),
            reason: pause.reason,
            changedBy: pause.changedBy,
            since: pause.since.toISOString(),
          }))}
        />
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
        <WebhookBanner troubled={troubledWebhooks} linked={can(role, 'webhooks.read')} />
        {children}
      </main>
    </>
  );
}
