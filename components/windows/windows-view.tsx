'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import { getStatusOverview } from '@/lib/api/console/overview';
import {
  getWindowsSummary,
  listAtRisk,
  listGaps,
  listMissed,
  resolveGapContract,
  windowTabs,
  type GapView,
  type WindowJobView,
  type WindowTab,
} from '@/lib/api/console/windows';
import { callConsole, consoleQuery, consoleQueryKey } from '@/lib/http/client';
import { formatCount, formatDuration, formatHours, formatUtc } from '@/lib/console/format';
import { LIVE_REFRESH_MS } from '@/components/query/live';
import { Pager } from '@/components/ui/pager';
import { EmptyState, ErrorState, SkeletonLines } from '@/components/ui/states';
import { ReasonField } from '@/components/ui/reason-field';

export type WindowsQuery = { tab: WindowTab; afterAt?: string; afterId?: string };

const tabLabels: Record<WindowTab, string> = { 'at-risk': 'At risk', missed: 'Missed (7 d)', gaps: 'Compliance gaps' };

export function WindowsView({ query, canResolve }: { query: WindowsQuery; canResolve: boolean }) {
  const router = useRouter();
  const summary = useQuery({ ...consoleQuery(getWindowsSummary, {}), refetchInterval: LIVE_REFRESH_MS });
  const totals = summary.data?.totals;
  const counts: Record<WindowTab, number | undefined> = { 'at-risk': totals?.atRisk, missed: totals?.missed7d, gaps: totals?.gaps };
  return (
    <>
      {summary.data ? (
        <div className="tiles" data-testid="windows-tiles">
          <div className={`tile ${summary.data.totals.atRisk > 0 ? 'warn' : 'good'}`} data-testid="windows-tile-at-risk">
            <div className="label">Due, not sent, window closes within {formatHours(summary.data.atRiskWithinMs)}</div>
            <div className="value">{formatCount(summary.data.totals.atRisk)}</div>
            <div className="hint">pending past its due time, or claimed</div>
          </div>
          <div className={`tile ${summary.data.totals.missed24h > 0 ? 'bad' : 'good'}`} data-testid="windows-tile-missed">
            <div className="label">Missed windows</div>
            <div className="value">{formatCount(summary.data.totals.missed24h)}</div>
            <div className="hint">last 24 h · {formatCount(summary.data.totals.missed7d)} in 7 d</div>
          </div>
          <div className={`tile ${summary.data.totals.gaps > 0 ? 'bad' : 'good'}`} data-testid="windows-tile-gaps">
            <div className="label">Open compliance gaps</div>
            <div className="value">{formatCount(summary.data.totals.gaps)}</div>
            <div className="hint">required notices that could not be planned</div>
          </div>
        </div>
      ) : summary.isError ? (
        <ErrorState error={summary.error} retry={() => void summary.refetch()} />
      ) : (
        <SkeletonLines lines={2} />
      )}
      <div className="row" style={{ marginBottom: 12 }}>
        <div className="segmented" role="tablist" aria-label="Windows" data-testid="windows-tabs">
          {windowTabs.map((tab) => (
            <button
              key={tab}
              type="button"
              role="tab"
              aria-pressed={tab === query.tab}
              aria-selected={tab === query.tab}
              onClick={() => router.push(tab === 'at-risk' ? '/windows' : `/windows?tab=${tab}`)}
              data-testid={`windows-tab-${tab}`}
            >
              {tabLabels[tab]}
              {counts[tab] !== undefined ? ` (${formatCount(counts[tab] ?? 0)})` : ''}
            </button>
          ))}
        </div>
      </div>
      {query.tab === 'at-risk' ? <AtRiskTable query={query} /> : null}
      {query.tab === 'missed' ? <MissedTable query={query} /> : null}
      {query.tab === 'gaps' ? <GapsTable query={query} canResolve={canResolve} /> : null}
    </>
  );
}

function Rules({ ids, version }: { ids: string[]; version: string | null }) {
  return (
    <>
      {ids.length === 0 ? (
        <span className="muted">merchant window only</span>
      ) : (
        ids.map((id) => (
          <span key={id} className="sub mono nowrap">
            {id}
          </span>
        ))
      )}
      {version ? <span className="sub mono muted">{version}</span> : null}
    </>
  );
}

function WindowCell({ row }: { row: WindowJobView }) {
  return (
    <>
      {formatUtc(row.windowEarliest ?? row.dueAt)}
      <span className="sub">→ {formatUtc(row.windowLatest)}</span>
    </>
  );
}

function NoticeCell({ noticeType, category }: { noticeType: string; category: string }) {
  return (
    <>
      <span className="mono">{noticeType}</span>
      <span className="sub">{category === 'required' ? <span className="badge warn">required</span> : 'courtesy'}</span>
    </>
  );
}

const stateBadge = (state: string) => <span className={`badge ${state === 'claimed' ? 'warn' : ''}`}>{state}</span>;

function AtRiskTable({ query }: { query: WindowsQuery }) {
  const input = { afterAt: query.afterAt, afterId: query.afterId };
  const page = useQuery({ ...consoleQuery(listAtRisk, input), refetchInterval: LIVE_REFRESH_MS });
  if (page.isError) return <ErrorState error={page.error} retry={() => void page.refetch()} />;
  if (!page.data) return <SkeletonLines lines={5} />;
  const generatedAt = new Date(page.data.generatedAt).getTime();
  return (
    <div className="card" data-testid="at-risk-table">
      <h2>Due and not sent, window closing within {formatHours(page.data.atRiskWithinMs)}</h2>
      <p className="muted small">
        Soonest to close first. A notice still pending or claimed when its window closes is not sent late: it is suppressed as <code>window_missed</code>. A
        required notice still retrying after <code>MAX_ATTEMPTS</code> temporary failures is listed too, whatever its deadline: it is retried until its window
        closes.
      </p>
      {page.data.rows.length === 0 ? (
        <EmptyState testId="at-risk-empty">
          <p>
            <strong>Nothing at risk.</strong> Every notice that is due has gone out or has more than {formatHours(page.data.atRiskWithinMs)} left in its window.
            If notices are missed while this stays empty, raise <code>WINDOW_AT_RISK_WITHIN</code>.
          </p>
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Notice</th>
                <th>Region</th>
                <th>Subject</th>
                <th>State</th>
                <th>Window (earliest → latest)</th>
                <th className="num">Closes in</th>
                <th>Rules</th>
              </tr>
            </thead>
            <tbody>
              {page.data.rows.map((row) => (
                <tr key={row.id} data-testid="at-risk-row" data-subject={row.subjectId}>
                  <td>
                    <NoticeCell noticeType={row.noticeType} category={row.category} />
                  </td>
                  <td>{row.region ?? <span className="muted">none</span>}</td>
                  <td>
                    <Link href={`/lookup?q=${encodeURIComponent(row.subjectId)}`} className="mono">
                      {row.subjectId}
                    </Link>
                  </td>
                  <td>
                    {stateBadge(row.state)}
                    {row.state === 'pending' && row.lastErrorClass ? (
                      <span className="sub small" data-testid="at-risk-retrying">
                        retrying after {row.attempts} {row.attempts === 1 ? 'failure' : 'failures'}: <span className="mono">{row.lastErrorClass}</span>
                      </span>
                    ) : null}
                  </td>
                  <td className="small nowrap">
                    <WindowCell row={row} />
                  </td>
                  <td className="num nowrap">
                    <span className={`badge ${new Date(row.windowLatest).getTime() - generatedAt < 3_600_000 ? 'bad' : 'warn'}`}>
                      {formatDuration(new Date(row.windowLatest).getTime() - generatedAt)}
                    </span>
                  </td>
                  <td className="small">
                    <Rules ids={row.ruleIds} version={row.ruleSetVersion} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager path="/windows" filter={{}} onFirstPage={!query.afterAt} next={page.data.next} firstLabel="Soonest" nextLabel="Later" nextTestId="at-risk-next" />
    </div>
  );
}

function MissedTable({ query }: { query: WindowsQuery }) {
  const input = { afterAt: query.afterAt, afterId: query.afterId };
  const page = useQuery({ ...consoleQuery(listMissed, input), refetchInterval: LIVE_REFRESH_MS });
  if (page.isError) return <ErrorState error={page.error} retry={() => void page.refetch()} />;
  if (!page.data) return <SkeletonLines lines={5} />;
  return (
    <div className="card" data-testid="missed-table">
      <h2>Missed windows, last 7 days</h2>
      <p className="muted small">Newest first. These were not sent: the window closed first. A required one may need sending by other means.</p>
      {page.data.rows.length === 0 ? (
        <EmptyState testId="missed-empty">
          <p>
            <strong>No window missed in the last 7 days.</strong> Nothing to do here.
          </p>
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Notice</th>
                <th>Region</th>
                <th>Subject</th>
                <th>Window (earliest → latest)</th>
                <th>Missed at</th>
                <th>Rules</th>
              </tr>
            </thead>
            <tbody>
              {page.data.rows.map((row) => (
                <tr key={row.id} data-testid="missed-row" data-subject={row.subjectId}>
                  <td>
                    <NoticeCell noticeType={row.noticeType} category={row.category} />
                  </td>
                  <td>{row.region ?? <span className="muted">none</span>}</td>
                  <td>
                    <Link href={`/lookup?q=${encodeURIComponent(row.subjectId)}`} className="mono">
                      {row.subjectId}
                    </Link>
                  </td>
                  <td className="small nowrap">
                    <WindowCell row={row} />
                  </td>
                  <td className="small nowrap">
                    {formatUtc(row.updatedAt)}
                    <span className="sub mono">{row.suppressionReason}</span>
                  </td>
                  <td className="small">
                    <Rules ids={row.ruleIds} version={row.ruleSetVersion} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager
        path="/windows"
        filter={{ tab: 'missed' }}
        onFirstPage={!query.afterAt}
        next={page.data.next}
        firstLabel="Newest"
        nextLabel="Older"
        nextTestId="missed-next"
      />
    </div>
  );
}

function GapsTable({ query, canResolve }: { query: WindowsQuery; canResolve: boolean }) {
  const queryClient = useQueryClient();
  const input = { afterAt: query.afterAt, afterId: query.afterId === undefined ? undefined : Number(query.afterId) };
  const page = useQuery({ ...consoleQuery(listGaps, input), refetchInterval: LIVE_REFRESH_MS });
  const [resolving, setResolving] = useState<GapView | null>(null);
  const [result, setResult] = useState<{ tone: 'ok' | 'critical'; text: string } | null>(null);

  async function refresh() {
    for (const key of [consoleQueryKey(listGaps, {}), consoleQueryKey(getWindowsSummary, {}), consoleQueryKey(getStatusOverview, {})]) {
      await queryClient.invalidateQueries({ queryKey: key });
    }
  }

  if (page.isError) return <ErrorState error={page.error} retry={() => void page.refetch()} />;
  if (!page.data) return <SkeletonLines lines={5} />;
  return (
    <div className="card" data-testid="gaps-table">
      <h2>Open compliance gaps</h2>
      <p className="muted small">
        Required notices an event called for that could not be planned inside the window the rules allow. Work each one (send by other means, or take counsel),
        then resolve it with what was done; the reason goes to the audit log.
      </p>
      {result ? (
        <div className={`banner ${result.tone}`} data-testid="gap-result">
          <span>{result.text}</span>
        </div>
      ) : null}
      {!canResolve ? (
        <p className="small muted" data-testid="gap-resolve-refused">
          Resolving a gap needs the operator role or higher.
        </p>
      ) : null}
      {resolving ? (
        <ResolvePanel
          gap={resolving}
          onCancel={() => setResolving(null)}
          onDone={async (text) => {
            setResolving(null);
            setResult({ tone: 'ok', text });
            await refresh();
          }}
          onError={(text) => setResult({ tone: 'critical', text })}
        />
      ) : null}
      {page.data.rows.length === 0 ? (
        <EmptyState testId="gaps-empty">
          <p>
            <strong>No open compliance gaps.</strong> Every required notice was planned inside its window, or someone resolved it with a reason (see the audit
            log).
          </p>
        </EmptyState>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th>Notice</th>
                <th>Region</th>
                <th>Event</th>
                <th>Why not planned</th>
                <th>Rules</th>
                <th>Recorded</th>
                {canResolve ? <th /> : null}
              </tr>
            </thead>
            <tbody>
              {page.data.rows.map((gap) => {
                const subject = gap.identity.subscription_id ?? gap.identity.account_id ?? Object.values(gap.identity)[0] ?? '';
                return (
                  <tr key={gap.id} data-testid="gap-row" data-subject={subject}>
                    <td>
                      <span className="mono">{gap.noticeType}</span>
                      <span className="sub">{gap.label}</span>
                    </td>
                    <td>{gap.region}</td>
                    <td className="small">
                      <span className="mono">{subject}</span>
                      <span className="sub">
                        {gap.eventType} rev {gap.revision}
                      </span>
                      <span className="sub nowrap">anchor {formatUtc(gap.anchorAt)}</span>
                    </td>
                    <td className="small" style={{ maxWidth: 320 }}>
                      <span className="badge bad">{gap.reason}</span>
                      {gap.detail ? <span className="sub">{gap.detail}</span> : null}
                    </td>
                    <td className="small">
                      <Rules ids={gap.ruleIds} version={gap.ruleSetVersion} />
                    </td>
                    <td className="small nowrap">{formatUtc(gap.createdAt)}</td>
                    {canResolve ? (
                      <td>
                        <button type="button" onClick={() => setResolving(gap)} data-testid={`gap-resolve-${gap.id}`}>
                          Resolve…
                        </button>
                      </td>
                    ) : null}
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      <Pager
        path="/windows"
        filter={{ tab: 'gaps' }}
        onFirstPage={!query.afterAt}
        next={page.data.next}
        firstLabel="Newest"
        nextLabel="Older"
        nextTestId="gaps-next"
      />
    </div>
  );
}

function ResolvePanel({
  gap,
  onCancel,
  onDone,
  onError,
}: {
  gap: GapView;
  onCancel: () => void;
  onDone: (text: string) => Promise<void>;
  onError: (text: string) => void;
}) {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const ready = reason.trim().length >= 3 && !busy;

  async function confirm() {
    setBusy(true);
    const result = await callConsole(resolveGapContract, { id: gap.id, reason: reason.trim() });
    setBusy(false);
    if (result.ok) await onDone(`Gap ${gap.id} (${gap.noticeType}, ${gap.region}) resolved by ${result.data.resolvedBy}. Recorded in the audit log.`);
    else onError(result.refusal.message);
  }

  return (
    <div className="confirm" data-testid="gap-resolve-panel">
      <h3>
        Resolve gap: {gap.noticeType} for {gap.region}
      </h3>
      <p className="small">The gap leaves the open list and the compliance-gap alert. Say what was done about the notice the law required.</p>
      <ReasonField
        id="gap-reason"
        testId="gap-reason"
        value={reason}
        onChange={setReason}
        placeholder="e.g. sent by registered post on 2 Dec; counsel (J. Doe) confirmed"
      />
      <div className="actions">
        <button type="button" className="primary" disabled={!ready} onClick={() => void confirm()} data-testid="gap-resolve-submit">
          {busy ? 'Working…' : 'Resolve gap'}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}
