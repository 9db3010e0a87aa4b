import type { Metadata } from 'next';
import { getDb } from '@/lib/process-db';
import { can } from '@/lib/auth/permissions';
import { config } from '@/lib/config';
import { listPauseViews } from '@/lib/controls/service';
import { formatDuration } from '@/lib/console/format';
import { configuredNoticeTypeNames } from '@/lib/windows/active';
import { PauseForm } from '@/components/controls/pause-form';
import { Forbidden } from '@/components/ui/states';
import { requirePage } from '@/app/_server/auth';

export const metadata: Metadata = { title: 'Controls' };
export const dynamic = 'force-dynamic';

export default async function ControlsPage() {
  const auth = await requirePage('overview.read', '/controls');
  if (!auth.ok) return <Forbidden message={auth.refusal.message} />;
  const horizonMs = config().WINDOW_AT_RISK_WITHIN;
  const pauses = await listPauseViews(getDb(), { horizonMs });
  const manage = can(auth.session.user.role, 'controls.manage');
  const types = [...configuredNoticeTypeNames()];
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Controls</h1>
          <p>
            The kill switch: pause all sending, one notice type or one channel. Every worker sees a change within{' '}
            {formatDuration(config().RUNTIME_CONTROLS_REFRESH)}, without a restart. While paused nothing is claimed or sent and no attempt is counted; windows
            keep closing.
          </p>
        </div>
      </div>
      <section className="card" data-testid="controls-pauses">
        <h2>Paused now</h2>
        {pauses.length === 0 ? (
          <p className="small" data-testid="controls-none">
            Nothing is paused: every notice type and channel sends.
          </p>
        ) : (
          <table>
            <thead>
              <tr>
                <th>Paused</th>
                <th>By, since</th>
                <th>Reason</th>
                <th title="Pending or claimed, not sent">Unsent in scope</th>
                <th>Window closes within {formatDuration(horizonMs)}</th>
                {manage ? <th /> : null}
              </tr>
            </thead>
            <tbody>
              {pauses.map((pause) => (
                <tr key={pause.name} data-testid="controls-pause-row" data-control={pause.name}>
                  <td>{pause.label}</td>
                  <td>
                    {pause.changedBy}, {pause.since.replace('T', ' ').slice(0, 19)} UTC
                  </td>
                  <td>{pause.reason}</td>
                  <td>{pause.inScope}</td>
                  <td data-testid="controls-pause-cost">{pause.closingWithinHorizon}</td>
                  {manage ? (
                    <td>
                      <PauseForm noticeTypes={types} action="resume" fixed={pause.name.replace(/^pause:/, '')} />
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      {manage ? (
        <section className="card">
          <h2>Pause</h2>
          <PauseForm noticeTypes={types} action="pause" />
        </section>
      ) : null}
    </>
  );
}
