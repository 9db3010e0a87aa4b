'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import {
  countQuarantine,
  listQuarantine,
  resolveQuarantineContract,
  type QuarantineAction,
  type QuarantineRowView,
  type QuarantineSelection,
  type ResolveOutcome,
} from '@/lib/api/console/quarantine';
import { getPendingOverview, getSeriesOverview, getStatusOverview } from '@/lib/api/console/overview';
import { callConsole, consoleQuery, consoleQueryKey } from '@/lib/http/client';
import { formatCount, formatDuration, formatUtc, shortKey } from '@/lib/console/format';
import { LIVE_REFRESH_MS } from '@/components/query/live';
import { Pager } from '@/components/ui/pager';
import { EmptyState, ErrorState, SkeletonLines } from '@/components/ui/states';
import { ReasonField } from '@/components/ui/reason-field';

export type QuarantineQuery = { olderThanMinutes?: number; recipientDomain?: string; noticeType?: string; afterClaimedAt?: string; afterKey?: string };

const actionLabels: Record<QuarantineAction, string> = { confirm_sent: 'Confirm sent', release: 'Release for resend', suppress: 'Suppress' };
/** The provider reconciler's last word (lib/reconcile/provider-lookups.ts). */
const lookupLabels = { not_found: 'not found yet', lookup_failed: 'lookup failed', gave_up: 'no record', found: 'found' } as const;
const providerLabels: Record<string, string> = { postmark: 'Postmark', sendgrid: 'SendGrid' };
const shortLabels: Record<QuarantineAction, string> = { confirm_sent: 'Confirm', release: 'Release', suppress: 'Suppress' };
const actionExplain: Record<QuarantineAction, string> = {
  confirm_sent: 'The ledger records these as sent and no email goes out again.',
  release: 'The claims are released and the jobs are due now: the worker sends again, reusing the stored one-time code.',
  suppress: 'The notices will never be sent; the jobs are suppressed with reason "operator".',
};

type Pending = { action: QuarantineAction; selection: QuarantineSelection; describe: string };

export function QuarantineView({ query, canResolve, noticeTypes }: { query: QuarantineQuery; canResolve: boolean; noticeTypes: string[] }) {
  const router = useRouter();
  const queryClient = useQueryClient();
  const list = useQuery({ ...consoleQuery(listQuarantine, query), refetchInterval: LIVE_REFRESH_MS });
  const [selected, setSelected] = useState<Set<string>>(new Set());
  const [pending, setPending] = useState<Pending | null>(null);
  const [result, setResult] = useState<{ tone: 'ok' | 'critical'; text: string } | null>(null);
  const filter = { olderThanMinutes: query.olderThanMinutes, recipientDomain: query.recipientDomain, noticeType: query.noticeType };
  const filtered = Boolean(query.olderThanMinutes || query.recipientDomain || query.noticeType);

  function toggle(key: string) {
    setSelected((current) => {
      const next = new Set(current);
      if (next.has(key)) next.delete(key);
      else next.add(key);
      return next;
    });
  }

  async function done(outcome: ResolveOutcome) {
    setPending(null);
    setSelected(new Set());
    const verb = { confirm_sent: 'Confirmed as sent', release: 'Released for resend', suppress: 'Suppressed' }[outcome.action];
    setResult({
      tone: 'ok',
      text: `${verb}: ${outcome.resolved.length} claim${outcome.resolved.length === 1 ? '' : 's'}.${outcome.skipped > 0 ? ` ${outcome.skipped} skipped: already resolved or no longer stuck.` : ''} Recorded in the audit log.`,
    });
    // An empty input matches every input: React Query compares keys partially.
    const stale = [
      consoleQueryKey(listQuarantine, {}),
      consoleQueryKey(getPendingOverview, {}),
      consoleQueryKey(getSeriesOverview, {}),
      consoleQueryKey(getStatusOverview, {}),
    ];
    for (const queryKey of stale) await queryClient.invalidateQueries({ queryKey });
    router.refresh();
  }

  return (
    <>
      <form className="card row" action="/quarantine" method="get" data-testid="quarantine-filter">
        <div>
          <label htmlFor="olderThanMinutes">Claimed at least (minutes ago)</label>
          <input id="olderThanMinutes" name="olderThanMinutes" type="number" min={0} defaultValue={query.olderThanMinutes ?? ''} style={{ width: 120 }} />
        </div>
        <div>
          <label htmlFor="recipientDomain">Recipient domain</label>
          <input id="recipientDomain" name="recipientDomain" defaultValue={query.recipientDomain ?? ''} placeholder="example.com" />
        </div>
        <div>
          <label htmlFor="noticeType">Notice type</label>
          <select id="noticeType" name="noticeType" defaultValue={query.noticeType ?? ''}>
            <option value="">any</option>
            {noticeTypes.map((type) => (
              <option key={type} value={type}>
                {type}
              </option>
            ))}
          </select>
        </div>
        <button type="submit">Filter</button>
        {filtered ? (
          <Link href="/quarantine" className="button">
            Clear
          </Link>
        ) : null}
      </form>

      {result ? (
        <div className={`banner ${result.tone}`} data-testid="resolve-result">
          <span className="icon">{result.tone === 'ok' ? '✓' : '!'}</span>
          <span>{result.text}</span>
        </div>
      ) : null}

      {!canResolve ? (
        <div className="notice" data-testid="read-only-note" style={{ marginBottom: 16 }}>
          You can read quarantine. Resolving a stuck claim needs the on-call role or higher.
        </div>
      ) : null}

      {list.isPending ? (
        <div className="card">
          <SkeletonLines lines={6} />
        </div>
      ) : list.isError ? (
        <ErrorState error={list.error} retry={() => void list.refetch()} />
      ) : list.data.rows.length === 0 ? (
        <EmptyState testId="quarantine-empty">
          {filtered
            ? 'No stuck claims match this filter. Clear the filter to see all of them.'
            : `No stuck claims. Every claim older than ${formatDuration(list.data.quarantineAfterMs)} has its result recorded.`}
        </EmptyState>
      ) : (
        <div className="card">
          <div className="page-head" style={{ marginBottom: 8 }}>
            <p data-testid="quarantine-total">
              <strong>{formatCount(list.data.total)}</strong> stuck claim{list.data.total === 1 ? '' : 's'}
              {filtered ? ' match the filter' : ''}, oldest first. Claimed over {formatDuration(list.data.quarantineAfterMs)} ago with no recorded result.
            </p>
            {canResolve ? (
              <div className="actions" data-testid="quarantine-actions">
                <span className="small muted">{selected.size} selected:</span>
                {(Object.keys(actionLabels) as QuarantineAction[]).map((action) => (
                  <button
                    key={action}
                    type="button"
                    disabled={selected.size === 0}
                    data-testid={`bulk-${action}`}
                    onClick={() =>
                      setPending({ action, selection: { keys: [...selected] }, describe: `${selected.size} selected claim${selected.size === 1 ? '' : 's'}` })
                    }
                  >
                    {actionLabels[action]}
                  </button>
                ))}
                <select
                  aria-label="Apply to every claim matching the filter"
                  value=""
                  data-testid="filter-action"
                  onChange={(event) => {
                    const action = event.target.value as QuarantineAction;
                    if (action)
                      setPending({ action, selection: { filter }, describe: filtered ? 'every stuck claim matching the filter' : 'every stuck claim' });
                  }}
                >
                  <option value="">All {filtered ? 'matching' : 'stuck'}…</option>
                  {(Object.keys(actionLabels) as QuarantineAction[]).map((action) => (
                    <option key={action} value={action}>
                      {actionLabels[action]}
                    </option>
                  ))}
                </select>
              </div>
            ) : null}
          </div>
          {pending ? (
            <ConfirmPanel pending={pending} onCancel={() => setPending(null)} onDone={done} onError={(text) => setResult({ tone: 'critical', text })} />
          ) : null}
          <div className="table-wrap">
            <table className="stack">
              <thead>
                <tr>
                  {canResolve ? (
                    <th>
                      <input
                        type="checkbox"
                        aria-label="Select all on this page"
                        checked={list.data.rows.every((row) => selected.has(row.noticeKey))}
                        onChange={(event) => setSelected(event.target.checked ? new Set(list.data.rows.map((row) => row.noticeKey)) : new Set())}
                      />
                    </th>
                  ) : null}
                  <th>Stuck for</th>
                  <th>Notice</th>
                  <th>Deadline</th>
                  <th>Domain</th>
                  <th>Provider evidence</th>
                  <th>Suggested</th>
                  {canResolve ? <th>Act</th> : null}
                </tr>
              </thead>
              <tbody>
                {list.data.rows.map((row) => (
                  <Row
                    key={row.noticeKey}
                    row={row}
                    canResolve={canResolve}
                    selected={selected.has(row.noticeKey)}
                    targeted={pending !== null && 'keys' in pending.selection && pending.selection.keys.includes(row.noticeKey)}
                    onToggle={() => toggle(row.noticeKey)}
                    onAct={(action) => setPending({ action, selection: { keys: [row.noticeKey] }, describe: `claim ${shortKey(row.noticeKey)}` })}
                  />
                ))}
              </tbody>
            </table>
          </div>
          <Pager
            path="/quarantine"
            filter={filter}
            onFirstPage={!query.afterKey}
            next={list.data.next}
            firstLabel="Oldest"
            nextLabel="Next page"
            nextTestId="next-page"
          />
        </div>
      )}
    </>
  );
}

function Row({
  row,
  canResolve,
  selected,
  targeted,
  onToggle,
  onAct,
}: {
  row: QuarantineRowView;
  canResolve: boolean;
  selected: boolean;
  targeted: boolean;
  onToggle: () => void;
  onAct: (action: QuarantineAction) => void;
}) {
  return (
    <tr className={selected || targeted ? 'selected' : undefined} data-testid="quarantine-row" data-notice-key={row.noticeKey}>
      {canResolve ? (
        <td className="select">
          <input type="checkbox" aria-label={`Select ${row.noticeKey}`} checked={selected} onChange={onToggle} />
        </td>
      ) : null}
      <td data-label="Stuck for">
        <strong>{formatDuration(row.ageMs)}</strong>
        <span className="sub">since {formatUtc(row.claimedAt).slice(5)}</span>
      </td>
      <td data-label="Notice">
        <Link className="mono" href={`/lookup?q=${row.noticeKey}`}>
          {shortKey(row.noticeKey)}
        </Link>
        <span className="sub">
          {row.noticeType}
          {row.subjectId ? ` · ${row.subjectId}` : ''}
        </span>
        <span className="sub">{row.claimedBy ? `claimed by ${row.claimedBy}` : ''}</span>
      </td>
      <td data-label="Deadline">
        {row.deadlineInMs === null ? (
          '—'
        ) : row.deadlineInMs <= 0 ? (
          <span className="badge bad">passed</span>
        ) : (
          <span className={row.deadlineInMs < 3_600_000 ? 'badge warn' : undefined}>in {formatDuration(row.deadlineInMs)}</span>
        )}
        <span className="sub">{formatUtc(row.deadlineAt).slice(5)}</span>
      </td>
      <td data-label="Domain">{row.recipientDomain ?? '—'}</td>
      <td data-testid="evidence" data-label="Evidence">
        {row.evidence.length === 0 ? (
          <span className="muted">none received</span>
        ) : (
          row.evidence.map((event, index) => (
            <span key={index} className="sub">
              <span className={`badge ${event.eventType === 'accepted' || event.eventType === 'delivered' ? 'good' : 'bad'}`}>{event.eventType}</span>{' '}
              {event.provider === 'twilio' && event.rawType ? <span> Twilio: {event.rawType}</span> : null} {formatUtc(event.occurredAt).slice(11)} ·{' '}
              {event.provider}
              {event.providerMessageId ? <span className="mono"> {event.providerMessageId}</span> : null}
              <span className="muted"> (by {event.matchedBy.replace('_', ' ')})</span>
            </span>
          ))
        )}
        {row.providerLookup ? (
          <span className="sub" data-testid="provider-lookup">
            <span className={`badge ${row.providerLookup.outcome === 'gave_up' || row.providerLookup.outcome === 'lookup_failed' ? 'warn' : ''}`}>
              {lookupLabels[row.providerLookup.outcome]}
            </span>{' '}
            asked {providerLabels[row.providerLookup.provider] ?? row.providerLookup.provider} {row.providerLookup.checks}×, last{' '}
            {formatUtc(row.providerLookup.lastCheckedAt).slice(11)}
            {row.providerLookup.outcome === 'lookup_failed' && row.providerLookup.detail ? <span className="mono"> {row.providerLookup.detail}</span> : null}
          </span>
        ) : null}
      </td>
      <td data-label="Suggested">
        <span className="badge">{actionLabels[row.suggestion]}</span>
        <span className="sub">{row.suggestionWhy}</span>
      </td>
      {canResolve ? (
        <td>
          <div className="actions stacked">
            {(Object.keys(actionLabels) as QuarantineAction[]).map((action) => (
              <button
                key={action}
                type="button"
                className={`compact ${action === row.suggestion ? 'primary' : ''}`}
                data-testid={`row-${action}`}
                aria-label={`${actionLabels[action]}: ${row.noticeKey}`}
                title={actionLabels[action]}
                onClick={() => onAct(action)}
              >
                {shortLabels[action]}
              </button>
            ))}
          </div>
        </td>
      ) : null}
    </tr>
  );
}

function ConfirmPanel({
  pending,
  onCancel,
  onDone,
  onError,
}: {
  pending: Pending;
  onCancel: () => void;
  onDone: (outcome: ResolveOutcome) => Promise<void>;
  onError: (text: string) => void;
}) {
  const count = useQuery({ ...consoleQuery(countQuarantine, { selection: pending.selection }), select: (data) => data.count });
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const ready = reason.trim().length >= 3 && count.isSuccess && count.data > 0 && !busy;

  async function confirm() {
    setBusy(true);
    const result = await callConsole(resolveQuarantineContract, { action: pending.action, selection: pending.selection, reason: reason.trim() });
    setBusy(false);
    if (result.ok) await onDone(result.data);
    else onError(result.refusal.message);
  }

  return (
    <div className={`confirm ${pending.action === 'suppress' ? 'danger' : ''}`} data-testid="confirm-panel">
      <h3>
        {actionLabels[pending.action]}: {pending.describe}
      </h3>
      <p data-testid="confirm-count">
        {count.isPending ? (
          'Counting…'
        ) : count.isError ? (
          `Could not count: ${count.error.message}`
        ) : (
          <>
            <strong>{formatCount(count.data)}</strong> stuck claim{count.data === 1 ? '' : 's'} will change.
          </>
        )}
      </p>
      <p className="small">{actionExplain[pending.action]}</p>
      <ReasonField
        id="reason"
        testId="confirm-reason"
        value={reason}
        onChange={setReason}
        placeholder="e.g. SES shows accepted at 02:14; worker was killed mid-send"
      />
      <div className="actions">
        <button
          type="button"
          className={pending.action === 'suppress' ? 'danger' : 'primary'}
          disabled={!ready}
          onClick={() => void confirm()}
          data-testid="confirm-submit"
        >
          {busy ? 'Working…' : `${actionLabels[pending.action]}${count.isSuccess ? ` (${count.data})` : ''}`}
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </div>
  );
}
