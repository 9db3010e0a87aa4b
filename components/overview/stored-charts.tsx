'use client';

import { useState, type ReactElement, type ReactNode } from 'react';
import { Area, AreaChart, Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { dueBuckets, timeRanges, type ChartPoint, type ChartsOverview, type TimeRange } from '@/lib/api/console/overview';
import { formatCount, formatTimeOfDay, formatUtc } from '@/lib/console/format';
import { EmptyState } from '@/components/ui/states';
import { useCharts } from './queries';

/** The ranges a stored chart offers; its samples are kept 8 days. */
const CHART_RANGES: TimeRange[] = ['1h', '24h', '7d'];

const bucketColors: Record<string, string> = {
  overdue: '#b91c1c',
  lt_1h: '#d97706',
  h1_6: '#ca8a04',
  h6_24: '#2563eb',
  d1_3: '#7c3aed',
  gt_3d: '#94a3b8',
};
const classColors = ['#b91c1c', '#d97706', '#7c3aed', '#2563eb', '#0f766e', '#64748b'];
const deliveryColors = ['#2563eb', '#15803d', '#7c3aed', '#0f766e', '#d97706', '#b91c1c'];

const tick = (range: TimeRange) => (iso: string) => (range === '7d' ? formatUtc(iso).slice(5, 10) : formatTimeOfDay(iso));
const tooltipLabel = (label: unknown) => (typeof label === 'string' ? formatUtc(label) : String(label));

function RangePicker({ range, onChange, label }: { range: TimeRange; onChange: (next: TimeRange) => void; label: string }) {
  return (
    <div className="segmented small" role="group" aria-label={`${label}: time range`}>
      {CHART_RANGES.map((name) => (
        <button key={name} type="button" aria-pressed={name === range} onClick={() => onChange(name)} title={timeRanges[name].label}>
          {name}
        </button>
      ))}
    </div>
  );
}

/** The page's range picks every chart's (the dashboard keys each chart by it); each chart may then pick its own. */
function useChartRange(pageRange: TimeRange): [TimeRange, (next: TimeRange) => void] {
  return useState<TimeRange>(CHART_RANGES.includes(pageRange) ? pageRange : '24h');
}

function StoredChartCard({
  title,
  hint,
  testId,
  range,
  onRange,
  empty,
  children,
  footer,
}: {
  title: string;
  hint: string;
  testId: string;
  range: TimeRange;
  onRange: (next: TimeRange) => void;
  /** What an empty chart means, or null when there is something to draw. */
  empty: ReactNode | null;
  children: ReactElement;
  footer?: ReactNode;
}) {
  return (
    <div className="card" data-testid={testId} data-range={range}>
      <div className="card-head">
        <h2>{title}</h2>
        <RangePicker range={range} onChange={onRange} label={title} />
      </div>
      <p className="muted small">{hint}</p>
      {empty ? (
        <EmptyState testId={`${testId}-empty`}>{empty}</EmptyState>
      ) : (
        <div className="chart">
          <ResponsiveContainer width="100%" height="100%">
            {children}
          </ResponsiveContainer>
        </div>
      )}
      {footer}
    </div>
  );
}

/** Nothing sampled in the range: say why, and what to check. */
function noSamples(data: ChartsOverview): ReactNode | null {
  if (data.points.some((point) => point.quarantined !== null)) return null;
  return data.sampledAt ? (
    <p>No samples in this range: the newest is from {formatUtc(data.sampledAt)}. Were the workers stopped?</p>
  ) : (
    <p>No samples yet. A running worker writes one every minute; check that a worker is up.</p>
  );
}

const axis = (range: TimeRange) => <XAxis dataKey="at" tickFormatter={tick(range)} minTickGap={24} fontSize={12} />;
const margin = { top: 8, right: 12, bottom: 0, left: 0 };

export function PendingBucketsChart({ pageRange }: { pageRange: TimeRange }) {
  const [range, setRange] = useChartRange(pageRange);
  const { data } = useCharts(range);
  return (
    <StoredChartCard
      title="Pending jobs by due time"
      hint="Stacked by how soon each pending job is due, at each sample. A draining backlog shrinks from the bottom (overdue, < 1 h)."
      testId="chart-pending"
      range={range}
      onRange={setRange}
      empty={noSamples(data)}
    >
      <AreaChart data={data.points} margin={margin}>
        <CartesianGrid stroke="#e5e9f0" vertical={false} />
        {axis(range)}
        <YAxis allowDecimals={false} width={56} fontSize={12} />
        <Tooltip labelFormatter={tooltipLabel} />
        <Legend />
        {dueBuckets.map((bucket) => (
          <Area
            key={bucket.id}
            type="stepAfter"
            dataKey={(point: ChartPoint) => point.pending?.[bucket.id] ?? null}
            name={bucket.label}
            stackId="pending"
            stroke={bucketColors[bucket.id]}
            fill={bucketColors[bucket.id]}
            fillOpacity={0.55}
            dot={{ r: 2 }}
            isAnimationActive={false}
          />
        ))}
      </AreaChart>
    </StoredChartCard>
  );
}

export function QuarantineChart({ pageRange }: { pageRange: TimeRange }) {
  const [range, setRange] = useChartRange(pageRange);
  const { data } = useCharts(range);
  const none = noSamples(data);
  const flatZero = !none && data.points.every((point) => (point.quarantined ?? 0) === 0);
  return (
    <StoredChartCard
      title="Claims in quarantine"
      hint="Claims stuck past QUARANTINE_AFTER at each sample: the mail may or may not be out until someone reads the evidence."
      testId="chart-quarantine"
      range={range}
      onRange={setRange}
      empty={none}
      footer={
        flatZero ? (
          <p className="muted small" data-testid="chart-quarantine-zero">
            None in quarantine in this range.
          </p>
        ) : null
      }
    >
      <LineChart data={data.points} margin={margin}>
        <CartesianGrid stroke="#e5e9f0" vertical={false} />
        {axis(range)}
        <YAxis allowDecimals={false} width={48} fontSize={12} />
        <Tooltip labelFormatter={tooltipLabel} />
        <Line type="stepAfter" dataKey="quarantined" name="quarantined" stroke="#b91c1c" dot={{ r: 2 }} strokeWidth={2} isAnimationActive={false} />
      </LineChart>
    </StoredChartCard>
  );
}

export function StoredLatencyChart({ pageRange }: { pageRange: TimeRange }) {
  const [range, setRange] = useChartRange(pageRange);
  const { data } = useCharts(range);
  const none = noSamples(data);
  const noSends = !none && data.points.every((point) => point.p99 === null);
  return (
    <StoredChartCard
      title="Claim-to-commit p50 / p99"
      hint="Milliseconds from the committed claim to the committed result; per bucket, the slowest sampled minute. A rising p99 widens the window in which a crash leaves a stuck claim."
      testId="chart-latency"
      range={range}
      onRange={setRange}
      empty={none ?? (noSends ? <p>No claimed sends in this range, so no claim-to-commit times to chart.</p> : null)}
    >
      <LineChart data={data.points} margin={margin}>
        <CartesianGrid stroke="#e5e9f0" vertical={false} />
        {axis(range)}
        <YAxis unit=" ms" width={64} fontSize={12} />
        <Tooltip labelFormatter={tooltipLabel} />
        <Legend />
        <Line type="monotone" dataKey="p50" name="p50" stroke="#2563eb" dot={{ r: 2 }} connectNulls strokeWidth={2} isAnimationActive={false} />
        <Line type="monotone" dataKey="p99" name="p99" stroke="#b91c1c" dot={{ r: 2 }} connectNulls strokeWidth={2} isAnimationActive={false} />
      </LineChart>
    </StoredChartCard>
  );
}

export function StoredClaimsChart({ pageRange }: { pageRange: TimeRange }) {
  const [range, setRange] = useChartRange(pageRange);
  const { data } = useCharts(range);
  const none = noSamples(data);
  const quiet = !none && data.points.every((point) => !point.claims && !point.duplicates && !point.wouldSuppress);
  return (
    <StoredChartCard
      title="Claims minted vs duplicates suppressed"
      hint="Every duplicate bar is an email the ledger stopped from going out twice (shadow mode: would have stopped)."
      testId="chart-claims"
      range={range}
      onRange={setRange}
      empty={none ?? (quiet ? <p>No notice was claimed or refused in this range: nothing was due, or no worker took it.</p> : null)}
    >
      <BarChart data={data.points} margin={margin}>
        <CartesianGrid stroke="#e5e9f0" vertical={false} />
        {axis(range)}
        <YAxis allowDecimals={false} width={48} fontSize={12} />
        <Tooltip labelFormatter={tooltipLabel} />
        <Legend />
        <Bar dataKey="claims" name="claims minted" fill="#2563eb" isAnimationActive={false} />
        <Bar dataKey="duplicates" name="duplicates suppressed" fill="#d97706" isAnimationActive={false} />
        <Bar dataKey="wouldSuppress" name="would suppress (shadow)" fill="#7c3aed" isAnimationActive={false} />
      </BarChart>
    </StoredChartCard>
  );
}

export function FailureClassesChart({ pageRange }: { pageRange: TimeRange }) {
  const [range, setRange] = useChartRange(pageRange);
  const { data } = useCharts(range);
  const none = noSamples(data);
  return (
    <StoredChartCard
      title="Failures by class"
      hint="Retryable, permanent and unknown outcomes by error class (smtp_451, connect_failed, …), the top five named."
      testId="chart-failure-classes"
      range={range}
      onRange={setRange}
      empty={none ?? (data.failureClasses.length === 0 ? <p>No send failed in this range.</p> : null)}
    >
      <BarChart data={data.points} margin={margin}>
        <CartesianGrid stroke="#e5e9f0" vertical={false} />
        {axis(range)}
        <YAxis allowDecimals={false} width={48} fontSize={12} />
        <Tooltip labelFormatter={tooltipLabel} />
        <Legend />
        {data.failureClasses.map((name, index) => (
          <Bar
            key={name}
            dataKey={(point: ChartPoint) => point.failures[name] ?? 0}
            name={name}
            stackId="failures"
            fill={classColors[index % classColors.length]}
            isAnimationActive={false}
          />
        ))}
      </BarChart>
    </StoredChartCard>
  );
}

const channelName = (key: string) => {
  const [channel, provider] = key.split('/');
  return `${channel === 'sms' ? 'SMS' : 'Email'} · ${provider ?? ''}`;
};

export function DeliveryTable({ data }: { data: ChartsOverview }) {
  const windowText = `${Math.round(data.delivery.windowMs / 60_000)} min`;
  return (
    <div className="table-wrap" data-testid="delivery-table">
      <table className="stack">
        <thead>
          <tr>
            <th>Provider</th>
            <th className="num">Handed over</th>
            <th className="num">Delivered</th>
            <th className="num" title="Handed over, no delivered event yet">
              Gap
            </th>
          </tr>
        </thead>
        <tbody>
          {data.delivery.rows.length === 0 ? (
            <tr>
              <td colSpan={4} className="muted">
                Nothing handed over in the last {windowText}.
              </td>
            </tr>
          ) : (
            data.delivery.rows.map((row) => (
              <tr key={`${row.channel}/${row.provider}`} data-testid={`delivery-row-${row.channel}-${row.provider}`}>
                <td data-label="Provider">{channelName(`${row.channel}/${row.provider}`)}</td>
                <td className="num" data-label="Handed over">
                  {formatCount(row.handedOver)}
                </td>
                {row.delivered === null ? (
                  <td className="num" colSpan={2} data-label="Delivered" data-testid="no-delivery-evidence">
                    <span className="badge">no delivery evidence</span>
                  </td>
                ) : (
                  <>
                    <td className="num" data-label="Delivered">
                      {formatCount(row.delivered)}
                    </td>
                    <td className="num" data-label="Gap" data-testid="delivery-gap">
                      {row.gap !== null && row.gap > 0 ? <span className="badge warn">{formatCount(row.gap)}</span> : formatCount(row.gap ?? 0)}
                    </td>
                  </>
                )}
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}

export function HandoverDeliveryChart({ pageRange }: { pageRange: TimeRange }) {
  const [range, setRange] = useChartRange(pageRange);
  const { data } = useCharts(range);
  const none = noSamples(data);
  const windowText = `${Math.round(data.delivery.windowMs / 60_000)} min`;
  return (
    <StoredChartCard
      title="Handed over vs delivered"
      hint={`At each sample: notices we handed over (ledger "sent") in the ${windowText} before it, and of those, the ones the provider reported delivered. A provider that sends no delivery events shows "no delivery evidence", never 0.`}
      testId="chart-handover"
      range={range}
      onRange={setRange}
      empty={none ?? (data.deliveryKeys.length === 0 ? <p>Nothing was handed over to a provider in this range.</p> : null)}
      footer={<DeliveryTable data={data} />}
    >
      <LineChart data={data.points} margin={margin}>
        <CartesianGrid stroke="#e5e9f0" vertical={false} />
        {axis(range)}
        <YAxis allowDecimals={false} width={48} fontSize={12} />
        <Tooltip labelFormatter={tooltipLabel} />
        <Legend />
        {data.deliveryKeys.flatMap((key, index) => [
          <Line
            key={`${key}-handed`}
            type="stepAfter"
            dataKey={(point: ChartPoint) => point.delivery[key]?.handedOver ?? null}
            name={`${channelName(key)} handed over`}
            stroke={deliveryColors[index % deliveryColors.length]}
            dot={{ r: 2 }}
            strokeWidth={2}
            isAnimationActive={false}
          />,
          <Line
            key={`${key}-delivered`}
            type="stepAfter"
            dataKey={(point: ChartPoint) => point.delivery[key]?.delivered ?? null}
            name={`${channelName(key)} delivered`}
            stroke={deliveryColors[index % deliveryColors.length]}
            strokeDasharray="4 3"
            dot={{ r: 2 }}
            strokeWidth={2}
            isAnimationActive={false}
          />,
        ])}
      </LineChart>
    </StoredChartCard>
  );
}
