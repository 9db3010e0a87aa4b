import type { Metadata } from 'next';
import { getDb } from '@/lib/process-db';
import { can } from '@/lib/auth/permissions';
import { config } from '@/lib/config';
import { loadRolloutView } from '@/lib/controls/rollout';
import { formatDuration, formatUtc } from '@/lib/console/format';
import { activeNoticeConfig, noticeTypeLabel } from '@/lib/windows/active';
import { RolloutActions } from '@/components/rollout/rollout-actions';
import { Forbidden } from '@/components/ui/states';
import { requirePage } from '@/app/_server/auth';

export const metadata: Metadata = { title: 'Rollout' };
export const dynamic = 'force-dynamic';

const percent = (rate: number | null) => (rate === null ? '—' : `${(rate * 100).toFixed(rate < 0.01 ? 2 : 1)}%`);

export default async function RolloutPage() {
  const auth = await requirePage('overview.read', '/rollout');
  if (!auth.ok) return <Forbidden message={auth.refusal.message} />;
  const view = await loadRolloutView(getDb(), {
    fallbackMode: config().LEDGER_MODE,
    notices: activeNoticeConfig(),
    label: noticeTypeLabel,
    refreshMs: config().RUNTIME_CONTROLS_REFRESH,
  });
  const role = auth.session.user.role;
  const cycleMet = view.daysInShadow !== null && view.daysInShadow >= view.longestCycle.days;
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Rollout</h1>
          <p>
            Shadow → backfill → enforce. The ledger mode is one stored setting: every worker reads it within {formatDuration(view.refreshMs)}, without a
            restart. In shadow the ledger records claims and counts duplicates but sends them; enforce suppresses them. Enforcing needs a second person.
          </p>
        </div>
      </div>
      <section className="tiles" data-testid="rollout-state">
        <div className={`tile${view.mode === 'shadow' ? ' warn' : ''}`}>
          <div className="label">Mode</div>
          <div className="value" data-testid="rollout-mode">
            {view.mode}
          </div>
          <div className="small">
            {view.stored ? `since ${formatUtc(view.since)} by ${view.changedBy ?? '—'}` : 'from LEDGER_MODE: no worker has stored it yet'}
          </div>
        </div>
        <div className={`tile${view.mode === 'shadow' && !cycleMet ? ' warn' : ''}`}>
          <div className="label">Days in shadow</div>
          <div className="value" data-testid="rollout-days">
            {view.daysInShadow ?? '—'} / {view.longestCycle.days}
          </div>
          <div className="small" data-testid="rollout-cycle" title={view.longestCycle.source}>
            against the longest renewal cycle in the configuration ({view.longestCycle.source})
          </div>
        </div>
        <div className={`tile${view.backfill.treatedAsNew > 0 ? ' warn' : ''}`}>
          <div className="label">Sent, no ledger row</div>
          <div className="value" data-testid="rollout-treated-as-new">
            {view.backfill.treatedAsNew}
          </div>
          <div className="small">what enforcing now would treat as new; enforce is refused above 0</div>
        </div>
      </section>

      <section className="card" data-testid="rollout-duplicates">
        <h2>Would have been suppressed, by type</h2>
        <p className="small">
          Shadow mode&apos;s own records since {formatUtc(view.duplicatesFrom)}: notices sent in shadow, and those whose claim was already taken (sent anyway;
          enforce would have suppressed them).
        </p>
        {view.duplicates.length === 0 ? (
          <p className="small" data-testid="rollout-duplicates-none">
            No notice was sent in shadow mode in this period, so there is no duplicate rate yet.
          </p>
        ) : (
          <table>
            <thead>
              <tr>
                <th>Notice type</th>
                <th>Sent in shadow</th>
                <th>Would have been suppressed</th>
                <th>Rate</th>
              </tr>
            </thead>
            <tbody>
              {view.duplicates.map((row) => (
                <tr key={row.noticeType} data-testid="rollout-duplicate-row" data-type={row.noticeType}>
                  <td>{row.label}</td>
                  <td>{row.sent}</td>
                  <td>{row.wouldSuppress}</td>
                  <td>{percent(row.rate)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      <section className="card" data-testid="rollout-backfill">
        <h2>Backfill</h2>
        <p className="small">
          Writes a <code>sent</code> ledger row for each job already sent with no ledger row (sent before the ledger), so enforcing does not send it again.
          Existing rows are never changed. A CSV of notices sent elsewhere: <code>npm run ledger -- backfill --csv FILE</code>.
        </p>
        <p className="small" data-testid="rollout-backfill-last">
          {view.backfill.last
            ? `Last: ${view.backfill.last.counts.dryRun ? 'dry run' : 'run'} by ${view.backfill.last.actor} at ${formatUtc(view.backfill.last.at)} — ${
                view.backfill.last.counts.total
              } looked at, ${view.backfill.last.counts.newKeys} new, ${view.backfill.last.counts.existing} already in the ledger (${view.backfill.last.reason}).`
            : 'No backfill has run.'}
        </p>
        <RolloutActions
          part="backfill"
          mode={view.mode}
          request={view.request}
          canManage={can(role, 'rollout.manage')}
          canApprove={can(role, 'rollout.approve')}
          me={auth.session.user.email}
        />
      </section>

      <section className="card">
        <h2>Enforce</h2>
        {view.request ? (
          <p data-testid="rollout-request">
            <strong>Waiting for a second person:</strong> {view.request.requestedBy} asked to enforce at {formatUtc(view.request.at)} ({view.request.reason}). A
            manager other than them approves.
          </p>
        ) : view.mode === 'enforce' ? (
          <p className="small">The ledger enforces: a duplicate claim is suppressed.</p>
        ) : (
          <p className="small">An operator asks, with a reason; a manager who is not them approves (four-eyes). Refused while sent jobs lack a ledger row.</p>
        )}
        {/* Remounted when what it acts on changes, so a refusal shown before a backfill or a decision does not linger. */}
        <RolloutActions
          key={`${view.mode}:${view.backfill.treatedAsNew}:${view.request?.at ?? ''}`}
          part="enforce"
          mode={view.mode}
          request={view.request}
          canManage={can(role, 'rollout.manage')}
          canApprove={can(role, 'rollout.approve')}
          me={auth.session.user.email}
        />
      </section>
    </>
  );
}
