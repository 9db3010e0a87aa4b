'use client';

import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { timeRangeNames, timeRanges, type TimeRange } from '@/lib/api/console/overview';
import { Section } from '@/components/ui/boundary';
import { SkeletonChart, SkeletonLines } from '@/components/ui/states';
import { AlertBanner, PendingTable, StatusTiles } from './status';
import { FailureClassesChart, HandoverDeliveryChart, PendingBucketsChart, QuarantineChart, StoredClaimsChart, StoredLatencyChart } from './stored-charts';
import { WindowsCard } from './windows-card';

const chartFallback = (
  <div className="card">
    <SkeletonChart />
  </div>
);

export function OverviewDashboard({ initialRange }: { initialRange: TimeRange }) {
  const [range, setRange] = useState<TimeRange>(initialRange);
  const router = useRouter();

  function choose(next: TimeRange) {
    setRange(next);
    router.replace(`/?range=${next}`, { scroll: false });
  }

  return (
    <>
      <div className="page-head">
        <div>
          <h1>Overview</h1>
          <p>Refreshes every 15 seconds.</p>
        </div>
        <div className="segmented" role="group" aria-label="Time range" data-testid="range-picker">
          {timeRangeNames.map((name) => (
            <button key={name} type="button" aria-pressed={name === range} onClick={() => choose(name)} title={timeRanges[name].label}>
              {name}
            </button>
          ))}
        </div>
      </div>
      <Section fallback={<SkeletonLines lines={2} />}>
        <AlertBanner />
      </Section>
      <Section fallback={<SkeletonLines lines={3} />}>
        <StatusTiles />
      </Section>
      <Section
        fallback={
          <div className="card">
            <SkeletonLines lines={5} />
          </div>
        }
      >
        <PendingTable />
      </Section>
      <Section
        fallback={
          <div className="card">
            <SkeletonLines lines={3} />
          </div>
        }
      >
        <WindowsCard />
      </Section>
      <div className="grid">
        <Section fallback={chartFallback}>
          <PendingBucketsChart key={range} pageRange={range} />
        </Section>
        <Section fallback={chartFallback}>
          <QuarantineChart key={range} pageRange={range} />
        </Section>
        <Section fallback={chartFallback}>
          <StoredLatencyChart key={range} pageRange={range} />
        </Section>
        <Section fallback={chartFallback}>
          <StoredClaimsChart key={range} pageRange={range} />
        </Section>
        <Section fallback={chartFallback}>
          <FailureClassesChart key={range} pageRange={range} />
        </Section>
        <Section fallback={chartFallback}>
          <HandoverDeliveryChart key={range} pageRange={range} />
        </Section>
      </div>
    </>
  );
}
