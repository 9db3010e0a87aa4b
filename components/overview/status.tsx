'use client';

import Link from 'next/link';
import { dueBuckets } from '@/lib/api/console/overview';
import { describeCountedAt, PENDING_FRESH_MS } from '@/lib/console/overview-model';
import { formatCount, formatDuration, formatUtc } from '@/lib/console/format';
import { usePending, useStatus } from './queries';

export function AlertBanner() {
  const { data } = useStatus();
  if (data.alerts.length === 0) {
    return (
      <div className="banner ok" data-testid="all-clear">
        <span className="icon">✓</span>
        <span>Nothing needs attention: no stuck claims, nothing near its deadline, no send window at risk or missed, no compliance gap, p99 steady.</span>
      </div>
    );
  }
  return (
    <div data-testid="alert-banner">
      {data.alerts.map((alert) => (
        <div key={alert.id} className={`banner ${alert.severity}`} data-testid={`alert-${alert.id}`}>
          <span className="icon">{alert.severity === 'critical' ? '!' : '▲'}</span>
          <span>
            {alert.message} {alert.href !== '/' ? <Link href={alert.href}>Open {alert.href.slice(1).split('?')[0]} →</Link> : null}
          </span>
        </div>
      ))}
    </div>
  );
}

export function StatusTiles() {
  const { data: status } = useStatus();
  const { data: pending } = usePending();
  const oldest = pending.oldest[0];
  const generatedAt = new Date(pending.generatedAt).getTime();
  const totalPending = pending.rows.reduce((sum, row) => sum + row.total, 0);
  const overdue = pending.rows.reduce((sum, row) => sum + row.counts.overdue, 0);
  const counted = describeCountedAt(pending);
  return (
    <div className="tiles">
      <div className={`tile ${status.quarantined > 0 ? 'bad' : 'good'}`} data-testid="tile-quarantine">
        <div className="label">Stuck claims (quarantine)</div>
        <div className="value">{formatCount(status.quarantined)}</div>
        <div className="hint">
          claimed over {formatDuration(status.quarantineAfterMs)} ago
          {status.quarantined > 0 ? (
            <>
              {' '}
              · <Link href="/quarantine">resolve</Link>
            </>
          ) : null}
        </div>
      </div>
      <div className={`tile ${status.deadLettered ? 'warn' : ''}`} data-testid="tile-dead-lettered">
        <div className="label">Dead-lettered wake-ups</div>
        <div className="value">{status.deadLettered === null ? '—' : formatCount(status.deadLettered)}</div>
        <div className="hint">
          {status.deadLettered === null ? 'the queue did not answer' : 'past the delivery limit; their jobs stay pending for the sweeper'}
        </div>
      </div>
      <div className={`tile ${overdue > 0 ? 'warn' : ''}`} data-testid="tile-pending">
        <div className="label">Pending jobs</div>
        <div className="value">{formatCount(totalPending)}</div>
        <div className="hint" title={counted.age}>
          {formatCount(overdue)} overdue · {counted.asOf}
        </div>
      </div>
      <div className={`tile ${status.nearDeadline > 0 ? 'warn' : ''}`} data-testid="tile-oldest">
        <div className="label">Oldest pending</div>
        {oldest ? (
          <>
            <div className="value">{formatDuration(Math.max(0, generatedAt - new Date(oldest.dueAt).getTime()))}</div>
            <div className="hint">
              past due · deadline{' '}
              {new Date(oldest.deadlineAt).getTime() < generatedAt ? 'passed' : `in ${formatDuration(new Date(oldest.deadlineAt).getTime() - generatedAt)}`}
            </div>
          </>
        ) : (
          <>
            <div className="value">—</div>
            <div className="hint">nothing pending</div>
          </>
        )}
      </div>
      <div className={`tile ${status.nearDeadline > 0 ? 'warn' : ''}`} data-testid="tile-deadline">
        <div className="label">Due, under 1 h to deadline</div>
        <div className="value">{formatCount(status.nearDeadline)}</div>
        <div className="hint">updated {formatUtc(status.generatedAt).slice(11)}</div>
      </div>
    </div>
  );
}

export function PendingTable() {
  const { data } = usePending();
  const generatedAt = new Date(data.generatedAt).getTime();
  const counted = describeCountedAt(data);
  return (
    <div className="card" data-testid="pending-table">
      <h2>Pending jobs by due time</h2>
      <p className="muted small" data-testid="pending-counted-at">
        Counts {counted.asOf} · {counted.age} · recounted at most every {formatDuration(PENDING_FRESH_MS)}. Oldest pending is live.
      </p>
      <div className="table-wrap">
        <table>
          <thead>
            <tr>
              <th>Notice type</th>
              {dueBuckets.map((bucket) => (
                <th key={bucket.id} className="num">
                  {bucket.label}
                </th>
              ))}
              <th className="num">Total</th>
              <th className="hide-sm">Oldest pending</th>
            </tr>
          </thead>
          <tbody>
            {data.rows.map((row) => {
              const oldest = data.oldest.find((entry) => entry.noticeType === row.noticeType);
              return (
                <tr key={row.noticeType} data-testid={`pending-row-${row.noticeType}`}>
                  <td>
                    {row.label}
                    <span className="sub mono hide-sm">{row.noticeType}</span>
                  </td>
                  {dueBuckets.map((bucket) => (
                    <td key={bucket.id} className="num" data-testid={`pending-${row.noticeType}-${bucket.id}`}>
                      {row.counts[bucket.id] > 0 && bucket.id === 'overdue' ? (
                        <span className="badge warn">{formatCount(row.counts[bucket.id])}</span>
                      ) : (
                        formatCount(row.counts[bucket.id])
                      )}
                    </td>
                  ))}
                  <td className="num">
                    <strong>{formatCount(row.total)}</strong>
                  </td>
                  <td className="hide-sm small">
                    {oldest ? (
                      <>
                        due {formatUtc(oldest.dueAt)}
                        <span className="sub">
                          deadline{' '}
                          {new Date(oldest.deadlineAt).getTime() < generatedAt ? (
                            <span className="badge bad">passed</span>
                          ) : (
                            `in ${formatDuration(new Date(oldest.deadlineAt).getTime() - generatedAt)}`
                          )}
                        </span>
                      </>
                    ) : (
                      '—'
                    )}
                  </td>
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
    </div>
  );
}
