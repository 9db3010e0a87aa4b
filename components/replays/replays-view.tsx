'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import {
  cancelReplayContract,
  decideReplayContract,
  listReplaysContract,
  rejectedRowsContract,
  runReplayContract,
  type ReplayView,
} from '@/lib/api/console/replays';
import { callConsole, consoleQuery, consoleQueryKey, consoleUrl } from '@/lib/http/client';
import type { Result } from '@/lib/http/refusal';
import { formatPercent } from '@/lib/replay/verdict';
import { EmptyState, ErrorState, SkeletonLines } from '@/components/ui/states';
import { RequestForm, type NoticeTypeOption } from './request-form';

export type Viewer = { id: string; canRequest: boolean; canApprove: boolean };

const stateTone: Record<string, string> = {
  requested: 'warn',
  approved: '',
  running: 'warn',
  completed: 'good',
  rejected: 'bad',
  cancelled: 'bad',
  failed: 'bad',
};

function ProgressBar({ view }: { view: ReplayView }) {
  const { total, published, suppressed, duplicates, sent, failed } = view.progress;
  if (!view.startedAt) return <span className="muted small">not started</span>;
  const pct = (n: number) => `${total === 0 ? 0 : Math.min(100, (n / total) * 100)}%`;
  return (
    <div data-testid={`progress-${view.id}`}>
      <div
        role="progressbar"
        aria-valuemin={0}
        aria-valuemax={total}
        aria-valuenow={published}
        aria-label="Wake-ups published"
        style={{ height: 10, minWidth: 160, background: '#e2e8f0', borderRadius: 999, overflow: 'hidden', display: 'flex' }}
      >
        <span title="suppressed" style={{ width: pct(suppressed), background: '#a35200' }} />
        <span title="sent" style={{ width: pct(sent), background: '#15803d' }} />
        <span title="failed" style={{ width: pct(failed), background: '#b91c1c' }} />
        <span title="published, not yet handled" style={{ width: pct(Math.max(0, published - suppressed - sent - failed)), background: '#1d4ed8' }} />
      </div>
      <div className="facts">
        <span>
          <b>published</b> <span data-testid="progress-published">{published}</span>/{total}
        </span>
        <span>
          <b>suppressed</b> <span data-testid="progress-suppressed">{suppressed}</span>{' '}
          <span className="muted small">
            (<span data-testid="progress-duplicates">{duplicates}</span> as duplicate)
          </span>
        </span>
        <span>
          <b>sent</b> <span data-testid="progress-sent">{sent}</span>
        </span>
        <span>
          <b>failed</b> <span data-testid="progress-failed">{failed}</span>
        </span>
      </div>
    </div>
  );
}

function describeFilter(view: ReplayView): string {
  const f = view.filter;
  if (f.uploaded) return `uploaded list${view.rejectedRows ? ` (${view.rejectedRows} rows rejected)` : ''}`;
  if (f.retryFailed) {
    const r = f.retryFailed;
    const extra = [r.noticeType ? `type ${r.noticeType}` : null, r.channel ? `by ${r.channel}` : null].filter(Boolean).join(', ');
    return `bulk retry of failed notices: ${r.errorClass}, failed ${r.from.replace('T', ' ').slice(0, 16)} → ${r.to.replace('T', ' ').slice(0, 16)}${extra ? `, ${extra}` : ''}`;
  }
  const parts = [
    f.dueFrom || f.dueTo
      ? `due ${f.dueFrom ? f.dueFrom.replace('T', ' ').slice(0, 16) : '…'} → ${f.dueTo ? f.dueTo.replace('T', ' ').slice(0, 16) : '…'}`
      : null,
    f.noticeType ? `type ${f.noticeType}` : null,
    f.source ? `source ${f.source}` : null,
  ].filter(Boolean);
  return parts.join(', ');
}

function Actions({ view, viewer, onDone }: { view: ReplayView; viewer: Viewer; onDone: (text: string, tone: 'ok' | 'critical') => void }) {
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const act = async (move: () => Promise<Result<unknown>>, success: string) => {
    setBusy(true);
    const result = await move();
    setBusy(false);
    if (result.ok) {
      setReason('');
      onDone(success, 'ok');
    } else onDone(result.refusal.message, 'critical');
  };
  const mayDecide = viewer.canApprove && view.state === 'requested';
  const own = view.requestedBy === viewer.id;
  const mayRun = viewer.canRequest && view.state === 'approved';
  const mayCancel = viewer.canRequest && ['requested', 'approved', 'running'].includes(view.state);
  if (!mayDecide && !mayRun && !mayCancel) return null;
  return (
    <div className="actions" data-testid={`actions-${view.id}`}>
      {mayDecide && own ? <span className="small muted">You requested this: another manager must decide.</span> : null}
      {(mayDecide && !own) || mayCancel ? (
        <input aria-label="Reason" placeholder="Reason" value={reason} onChange={(event) => setReason(event.target.value)} data-testid={`reason-${view.id}`} />
      ) : null}
      {mayDecide && !own ? (
        <>
          <button
            type="button"
            className="primary compact"
            disabled={busy || reason.trim().length < 3}
            onClick={() => void act(() => callConsole(decideReplayContract, { id: view.id, decision: 'approve', reason }), 'Approved.')}
            data-testid={`approve-${view.id}`}
          >
            Approve
          </button>
          <button
            type="button"
            className="compact"
            disabled={busy || reason.trim().length < 3}
            onClick={() => void act(() => callConsole(decideReplayContract, { id: view.id, decision: 'reject', reason }), 'Rejected.')}
            data-testid={`reject-${view.id}`}
          >
            Reject
          </button>
        </>
      ) : null}
      {mayRun ? (
        <button
          type="button"
          className="primary compact"
          disabled={busy}
          onClick={() => void act(() => callConsole(runReplayContract, { id: view.id }), 'Running: wake-ups are published at the per-domain rate.')}
          data-testid={`run-${view.id}`}
        >
          Run
        </button>
      ) : null}
      {mayCancel ? (
        <button
          type="button"
          className="danger compact"
          disabled={busy || reason.trim().length < 3}
          onClick={() => void act(() => callConsole(cancelReplayContract, { id: view.id, reason }), 'Cancelled: nothing more will be published.')}
          data-testid={`cancel-${view.id}`}
        >
          Cancel
        </button>
      ) : null}
    </div>
  );
}

export function ReplaysView({ viewer, noticeTypes }: { viewer: Viewer; noticeTypes: NoticeTypeOption[] }) {
  const queryClient = useQueryClient();
  const [message, setMessage] = useState<{ text: string; tone: 'ok' | 'critical' } | null>(null);
  const list = useQuery({
    ...consoleQuery(listReplaysContract, {}),
    refetchInterval: (query) => ((query.state.data ?? []).some((view) => view.state === 'running') ? 2_000 : 15_000),
  });
  const done = async (text: string, tone: 'ok' | 'critical') => {
    setMessage({ text, tone });
    await queryClient.invalidateQueries({ queryKey: consoleQueryKey(listReplaysContract, {}) });
  };
  return (
    <>
      {message ? (
        <div className={`banner ${message.tone}`} role="status" data-testid="replay-message">
          {message.text}
        </div>
      ) : null}
      {viewer.canRequest ? <RequestForm noticeTypes={noticeTypes} onRequested={(text) => void done(text, 'ok')} /> : null}
      <section className="card">
        <h2>Replays</h2>
        {list.isPending ? <SkeletonLines /> : null}
        {list.isError ? <ErrorState error={list.error} retry={() => void list.refetch()} /> : null}
        {list.data && list.data.length === 0 ? <EmptyState>No replays yet.</EmptyState> : null}
        {list.data && list.data.length > 0 ? (
          <div className="table-wrap">
            <table className="stack" data-testid="replays-table">
              <thead>
                <tr>
                  <th>State</th>
                  <th>Batch / what</th>
                  <th>Requested</th>
                  <th>Dry run</th>
                  <th>Progress</th>
                  <th>Actions</th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((view) => (
                  <tr key={view.id} data-testid={`replay-${view.id}`} data-batch={view.batchId}>
                    <td data-label="State">
                      <span className={`badge ${stateTone[view.state] ?? ''}`} data-testid="replay-state">
                        {view.state}
                      </span>
                    </td>
                    <td data-label="Batch / what">
                      <code>{view.batchId}</code>
                      <span className="sub">{describeFilter(view)}</span>
                      {view.rejectedRows > 0 ? (
                        <a className="small" href={consoleUrl(rejectedRowsContract, { id: view.id })}>
                          Rejected rows (CSV)
                        </a>
                      ) : null}
                    </td>
                    <td data-label="Requested">
                      {view.requesterEmail ?? view.requestedBy}
                      <span className="sub">{view.requestReason}</span>
                      {view.deciderEmail ? (
                        <span className="sub">
                          {view.state === 'rejected' ? 'rejected' : 'approved'} by {view.deciderEmail}: {view.decisionReason}
                        </span>
                      ) : null}
                    </td>
                    <td data-label="Dry run">
                      {view.filter.retryFailed && view.dryRun ? (
                        <span data-testid="dry-run-retry">{view.dryRun.total} failed, window open</span>
                      ) : view.dryRun && view.verdict ? (
                        <>
                          <span data-testid="dry-run-new">{view.dryRun.newKeys}</span> new of {view.dryRun.total} ({formatPercent(view.verdict.share)})
                          {view.verdict.kind === 'already_delivered' ? <span className="sub badge warn">already delivered</span> : null}
                        </>
                      ) : (
                        '—'
                      )}
                    </td>
                    <td data-label="Progress">
                      <ProgressBar view={view} />
                    </td>
                    <td data-label="Actions">
                      <Actions view={view} viewer={viewer} onDone={(text, tone) => void done(text, tone)} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        ) : null}
      </section>
    </>
  );
}
