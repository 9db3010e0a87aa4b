'use client';

import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { timeRangeNames, timeRanges, type TimeRange } from '@/lib/api/console/overview';
import { Section } from '@/components/ui/boundary';
import { SkeletonChart, SkeletonLines } from '@/components/ui/states';
import { ClaimsChart, DeliveryChart, FailuresChart, LatencyChart } from './charts';
import { AlertBanner, ChannelSplit, PendingTable, StatusTiles } from './status';
import { WindowsCard } from './windows-card';

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
      <Section
        fallback={
          <div className="card">
            <SkeletonLines lines={3} />
          </div>
        }
      >
        <ChannelSplit />
      </Section>
      <div className="grid">
        <Section
          fallback={
            <div className="card">
              <SkeletonChart />
            </div>
          }
        >
          <LatencyChart range={range} />
        </Section>
        <Section
          fallback={
            <div className="card">
              <SkeletonChart />
            </div>
          }
        >
          <ClaimsChart range={range} />
        </Section>
        <Section
          fallback={
            <div className="card">
              <SkeletonChart />
            </div>
          }
        >
          <FailuresChart range={range} />
        </Section>
        <Section
          fallback={
            <div className="card">
              <SkeletonChart />
            </div>
          }
        >
          <DeliveryChart range={range} />
        </Section>
      </div>
    </>
  );
}
