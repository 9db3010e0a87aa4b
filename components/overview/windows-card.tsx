'use client';

import Link from 'next/link';
import { useSuspenseQuery } from '@tanstack/react-query';
import { getWindowsSummary } from '@/lib/api/console/windows';
import { consoleQuery } from '@/lib/http/client';
import { formatCount, formatHours } from '@/lib/console/format';
import { LIVE_REFRESH_MS } from '@/components/query/live';

/** The overview's send-window figures by notice type × region: at risk, missed in 24 h / 7 d, open compliance gaps. */
export function WindowsCard() {
  const { data } = useSuspenseQuery({ ...consoleQuery(getWindowsSummary, {}), refetchInterval: LIVE_REFRESH_MS });
  const cell = (value: number, tone: 'warn' | 'bad', testId: string) => (
    <td className="num" data-testid={testId}>
      {value > 0 ? <span className={`badge ${tone}`}>{formatCount(value)}</span> : <span className="muted">0</span>}
    </td>
  );
  return (
    <div className="card" data-testid="windows-card">
      <h2>
        Send windows{' '}
        <Link href="/windows" className="small">
          open →
        </Link>
      </h2>
      <p className="muted small">
        Due, not sent, closing within {formatHours(data.atRiskWithinMs)}: <strong data-testid="windows-at-risk-total">{formatCount(data.totals.atRisk)}</strong>{' '}
        · missed in 24 h: <strong data-testid="windows-missed-24h-total">{formatCount(data.totals.missed24h)}</strong> (7 d:{' '}
        <strong data-testid="windows-missed-7d-total">{formatCount(data.totals.missed7d)}</strong>) · open compliance gaps:{' '}
        <strong data-testid="windows-gaps-total">{formatCount(data.totals.gaps)}</strong>
      </p>
      {data.rows.length === 0 ? (
        <div className="notice" data-testid="windows-card-empty">
          Nothing at risk, no window missed in 7 days, no compliance gap. Planned notices with a window show here by type and region when one needs attention.
        </div>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Notice type</th>
                <th>Region</th>
                <th className="num">At risk</th>
                <th className="num">Missed 24 h</th>
                <th className="num">Missed 7 d</th>
                <th className="num">Open gaps</th>
              </tr>
            </thead>
            <tbody>
              {data.rows.map((row) => (
                <tr key={`${row.noticeType} ${row.region}`} data-testid={`windows-row-${row.noticeType}-${row.region}`}>
                  <td>
                    {row.label}
                    <span className="sub mono">
                      {row.noticeType}
                      {row.category === 'required' ? ' · required' : ''}
                    </span>
                  </td>
                  <td>{row.region}</td>
                  {cell(row.atRisk, 'warn', `windows-${row.noticeType}-${row.region}-at-risk`)}
                  {cell(row.missed24h, 'bad', `windows-${row.noticeType}-${row.region}-missed-24h`)}
                  {cell(row.missed7d, 'warn', `windows-${row.noticeType}-${row.region}-missed-7d`)}
                  {cell(row.gaps, 'bad', `windows-${row.noticeType}-${row.region}-gaps`)}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
