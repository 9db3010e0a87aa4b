'use client';

import { Bar, BarChart, CartesianGrid, Legend, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { TimeRange } from '@/lib/api/console/overview';
import { formatTimeOfDay, formatUtc } from '@/lib/console/format';
import { useSeries } from './queries';

const colors = {
  p50: '#2563eb',
  p99: '#b91c1c',
  claims: '#2563eb',
  duplicates: '#d97706',
  wouldSuppress: '#7c3aed',
  retryable: '#d97706',
  permanent: '#b91c1c',
  accepted: '#2563eb',
  delivered: '#15803d',
};

function tick(range: TimeRange) {
  return (iso: string) => (range === '7d' ? formatUtc(iso).slice(5, 10) : formatTimeOfDay(iso));
}

const tooltipLabel = (label: unknown) => (typeof label === 'string' ? formatUtc(label) : String(label));

function ChartCard({ title, hint, testId, children }: { title: string; hint: string; testId: string; children: React.ReactElement }) {
  return (
    <div className="card" data-testid={testId}>
      <h2>{title}</h2>
      <p className="muted small">{hint}</p>
      <div className="chart">
        <ResponsiveContainer width="100%" height="100%">
          {children}
        </ResponsiveContainer>
      </div>
    </div>
  );
}

export function LatencyChart({ range }: { range: TimeRange }) {
  const { data } = useSeries(range);
  return (
    <ChartCard
      title="Claim-to-commit time"
      hint="Milliseconds from the committed claim to the committed result. A rising p99 widens the window in which a crash leaves a stuck claim."
      testId="chart-latency"
    >
      <LineChart data={data.points} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
        <CartesianGrid stroke="#e5e9f0" vertical={false} />
        <XAxis dataKey="at" tickFormatter={tick(range)} minTickGap={24} fontSize={12} />
        <YAxis unit=" ms" width={64} fontSize={12} />
        <Tooltip labelFormatter={tooltipLabel} />
        <Legend />
        <Line type="monotone" dataKey="p50" name="p50" stroke={colors.p50} dot={{ r: 2 }} connectNulls strokeWidth={2} isAnimationActive={false} />
        <Line type="monotone" dataKey="p99" name="p99" stroke={colors.p99} dot={{ r: 2 }} connectNulls strokeWidth={2} isAnimationActive={false} />
      </LineChart>
    </ChartCard>
  );
}

export function ClaimsChart({ range }: { range: TimeRange }) {
  const { data } = useSeries(range);
  return (
    <ChartCard
      title="Claims minted vs duplicates suppressed"
      hint="Every duplicate bar is an email the ledger stopped from going out twice (shadow mode: would have stopped)."
      testId="chart-claims"
    >
      <BarChart data={data.points} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
        <CartesianGrid stroke="#e5e9f0" vertical={false} />
        <XAxis dataKey="at" tickFormatter={tick(range)} minTickGap={24} fontSize={12} />
        <YAxis allowDecimals={false} width={48} fontSize={12} />
        <Tooltip labelFormatter={tooltipLabel} />
        <Legend />
        <Bar dataKey="claims" name="claims minted" fill={colors.claims} isAnimationActive={false} />
        <Bar dataKey="duplicates" name="duplicates suppressed" fill={colors.duplicates} isAnimationActive={false} />
        <Bar dataKey="wouldSuppress" name="would suppress (shadow)" fill={colors.wouldSuppress} isAnimationActive={false} />
      </BarChart>
    </ChartCard>
  );
}

export function FailuresChart({ range }: { range: TimeRange }) {
  const { data } = useSeries(range);
  return (
    <ChartCard
      title="Send failures"
      hint="Retryable: the provider refused for now and the job retries with backoff. Permanent: it will not be retried."
      testId="chart-failures"
    >
      <BarChart data={data.points} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
        <CartesianGrid stroke="#e5e9f0" vertical={false} />
        <XAxis dataKey="at" tickFormatter={tick(range)} minTickGap={24} fontSize={12} />
        <YAxis allowDecimals={false} width={48} fontSize={12} />
        <Tooltip labelFormatter={tooltipLabel} />
        <Legend />
        <Bar dataKey="retryable" name="retryable" stackId="f" fill={colors.retryable} isAnimationActive={false} />
        <Bar dataKey="permanent" name="permanent" stackId="f" fill={colors.permanent} isAnimationActive={false} />
      </BarChart>
    </ChartCard>
  );
}

export function DeliveryChart({ range }: { range: TimeRange }) {
  const { data } = useSeries(range);
  return (
    <ChartCard
      title="Accepted vs delivered"
      hint="Provider events received. A gap that keeps growing means mail is accepted but not reaching inboxes."
      testId="chart-delivery"
    >
      <LineChart data={data.points} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
        <CartesianGrid stroke="#e5e9f0" vertical={false} />
        <XAxis dataKey="at" tickFormatter={tick(range)} minTickGap={24} fontSize={12} />
        <YAxis allowDecimals={false} width={48} fontSize={12} />
        <Tooltip labelFormatter={tooltipLabel} />
        <Legend />
        <Line type="linear" dataKey="accepted" name="accepted" stroke={colors.accepted} dot={false} strokeWidth={2} isAnimationActive={false} />
        <Line type="linear" dataKey="delivered" name="delivered" stroke={colors.delivered} dot={false} strokeWidth={2} isAnimationActive={false} />
      </LineChart>
    </ChartCard>
  );
}
