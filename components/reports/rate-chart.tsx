'use client';

import { CartesianGrid, Line, LineChart, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import type { RatePoint } from '@/lib/console/duplicate-report';

/** The duplicate rate over the report's periods, every notice type together: is it going down? */
export function RateChart({ points, granularity }: { points: RatePoint[]; granularity: string }) {
  return (
    <section className="card report-section" data-testid="report-rate-chart">
      <h2>Duplicate rate over time</h2>
      <p className="muted small">
        Duplicates suppressed per claim minted, by {granularity}, all notice types. Each point is a period of the table below; a period without claims has no
        rate.
      </p>
      {points.length === 0 ? (
        <p className="muted">Nothing in this range: pick a range with sends to see the rate.</p>
      ) : (
        <div className="chart">
          <ResponsiveContainer width="100%" height="100%">
            <LineChart data={points} margin={{ top: 8, right: 12, bottom: 0, left: 0 }}>
              <CartesianGrid stroke="#e5e9f0" vertical={false} />
              <XAxis dataKey="period" minTickGap={24} fontSize={12} />
              <YAxis unit=" %" width={64} fontSize={12} allowDecimals />
              <Tooltip formatter={(value) => [`${String(value)} %`, 'duplicate rate']} />
              <Line
                type="monotone"
                dataKey="ratePercent"
                name="duplicate rate"
                stroke="#d97706"
                dot={{ r: 3 }}
                connectNulls
                strokeWidth={2}
                isAnimationActive={false}
              />
            </LineChart>
          </ResponsiveContainer>
        </div>
      )}
    </section>
  );
}
