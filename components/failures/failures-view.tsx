'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import Link from 'next/link';
import { useRouter } from 'next/navigation';
import { useState } from 'react';
import {
  bulkRetryContract,
  failureKinds,
  listFailuresContract,
  retryFailureContract,
  type BulkRetryOutcome,
  type FailuresQuery,
  type FailureView,
} from '@/lib/api/console/failures';
import { callConsole, consoleQuery, consoleQueryKey } from '@/lib/http/client';
import { formatCount, formatUtc, shortKey } from '@/lib/console/format';
import { LIVE_REFRESH_MS } from '@/components/query/live';
import { Pager } from '@/components/ui/pager';
import { EmptyState, ErrorState, SkeletonLines } from '@/components/ui/states';
import { ReasonField } from '@/components/ui/reason-field';

type Kind = (typeof failureKinds)[number];

const kindLabels: Record<Kind, string> = { failed: 'Failed', retrying: 'Retrying', deferred: 'Deferred', window_missed: 'Window missed' };
const kindTone: Record<Kind, string> = { failed: 'bad', retrying: 'warn', deferred: '', window_missed: 'bad' };

/** The error classes the transports record, offered while typing (any class may be typed). */
const knownErrorClasses = ['connect_failed', 'smtp_421', 'smtp_451', 'smtp_535', 'smtp_550', 'timeout', 'connection_lost', 'render_failed', 'twilio_21610'];

/** A `datetime-local` value (UTC on this page) from an instant, and back. */
const toLocal = (iso: string | undefined) => (iso ? iso.slice(0, 16) : '');

type Banner = { tone: 'ok' | 'critical'; text: string };

export function FailuresView({ query, canRetry, noticeTypes }: { query: FailuresQuery; canRetry: boolean; noticeTypes: string[] }) {
  const router = useRouter();
  const queryClient = useQueryClient();
  const list = useQuery({ ...consoleQuery(listFailuresContract, query), refetchInterval: LIVE_REFRESH_MS });
  const [banner, setBanner] = useState<Banner | null>(null);
  const filter = { kind: query.kind, noticeType: query.noticeType, channel: query.channel, errorClass: query.errorClass, from: query.from, to: query.to };
  const filtered = Object.values(filter).some((value) => value !== undefined);

  async function changed(next: Banner) {
    setBanner(next);
    await queryClient.invalidateQueries({ queryKey: consoleQueryKey(listFailuresContract, {}) });
    router.refresh();
  }

  return (
    <>
      <form className="card row" action="/failures" method="get" data-testid="failures-filter">
        <div>
          <label htmlFor="kind">Kind</label>
          <select id="kind" name="kind" defaultValue={query.kind ?? ''}>
            <option value="">any</option>
            {failureKinds.map((kind) => (
              <option key={kind} value={kind}>
                {kindLabels[kind]}
              </option>
            ))}
          </select>
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
        <div>
          <label htmlFor="channel">Channel</label>
          <select id="channel" name="channel" defaultValue={query.channel ?? ''}>
            <option value="">any</option>
            <option value="email">email</option>
            <option value="sms">sms</option>
          </select>
        </div>
        <div>
          <label htmlFor="errorClass">Reason (error class)</label>
          <input id="errorClass" name="errorClass" list="error-classes" defaultValue={query.errorClass ?? ''} placeholder="smtp_451" style={{ width: 150 }} />
          <datalist id="error-classes">
            {knownErrorClasses.map((errorClass) => (
              <option key={errorClass} value={errorClass} />
            ))}
          </datalist>
        </div>
        <div>
          <label htmlFor="from">Changed from (UTC)</label>
          <input id="from" name="from" type="datetime-local" defaultValue={toLocal(query.from)} />
        </div>
        <div>
          <label htmlFor="to">until (UTC)</label>
          <input id="to" name="to" type="datetime-local" defaultValue={toLocal(query.to)} />
        </div>
        <button type="submit">Filter</button>
        {filtered ? (
          <Link href="/failures" className="button">
            Clear
          </Link>
        ) : null}
      </form>

      {banner ? (
        <div className={`banner ${banner.tone}`} data-testid="failures-result">
          <span className="icon">{banner.tone === 'ok' ? '✓' : '!'}</span>
          <span>{banner.text}</span>
        </div>
      ) : null}

      {canRetry ? (
        <BulkRetry query={query} approvalAbove={list.data?.approvalAbove ?? null} onDone={changed} />
      ) : (
        <div className="notice" data-testid="read-only-note" style={{ marginBottom: 16 }}>
          You can read this page. Retrying a failed notice needs the on-call role or higher.
        </div>
      )}

      {list.isPending ? (
        <div className="card">
          <SkeletonLines lines={6} />
        </div>
      ) : list.isError ? (
        <ErrorState error={list.error} retry={() => void list.refetch()} />
      ) : list.data.rows.length === 0 ? (
        <EmptyState testId="failures-empty">
          {filtered ? (
            'No notice matches this filter. Clear the filter to see every failed, retrying, deferred or missed notice.'
          ) : (
            <>
              <strong>Nothing needs attention.</strong> No notice has failed, is being retried, is held past its due time or missed its window. Notices that go
              out on their first try never appear here.
            </>
          )}
        </EmptyState>
      ) : (
        <div className="card">
          <p className="small muted">
            Newest change first. A temporary failure is retried until the notice&apos;s window closes; only a permanent refusal fails it. A failed notice whose
            window is still open can be retried: it keeps its one-time code and link.
          </p>
          <div className="table-wrap">
            <table className="stack">
              <thead>
                <tr>
                  <th>Changed</th>
                  <th>Notice</th>
                  <th>Kind</th>
                  <th>Reason</th>
                  <th>Window closes</th>
                  {canRetry ? <th>Act</th> : null}
                </tr>
              </thead>
              <tbody>
                {list.data.rows.map((row) => (
                  <Row key={row.id} row={row} canRetry={canRetry} onDone={changed} />
                ))}
              </tbody>
            </table>
          </div>
          <Pager
            path="/failures"
            filter={filter}
            onFirstPage={!query.afterAt}
            next={list.data.next}
            firstLabel="Newest"
            nextLabel="Older"
            nextTestId="failures-next"
          />
        </div>
      )}
    </>
  );
}

function Row({ row, canRetry, onDone }: { row: FailureView; canRetry: boolean; onDone: (banner: Banner) => Promise<void> }) {
  const [open, setOpen] = useState(false);
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  async function retry() {
    setBusy(true);
    const result = await callConsole(retryFailureContract, { id: row.id, reason });
    setBusy(false);
    setOpen(false);
    await onDone(
      result.ok
        ? { tone: 'ok', text: `Retrying ${row.label} for ${row.subjectId} now, with its first one-time code and link. Recorded in the audit log.` }
        : { tone: 'critical', text: result.refusal.message },
    );
  }
  return (
    <tr data-testid="failure-row" data-kind={row.kind} data-subject={row.subjectId}>
      <td data-label="Changed" className="small nowrap">
        {formatUtc(row.updatedAt)}
      </td>
      <td data-label="Notice">
        <Link className="mono" href={`/lookup?q=${row.noticeKey}`}>
          {shortKey(row.noticeKey)}
        </Link>
        <span className="sub">
          {row.label} · {row.channel}
          {row.category === 'required' ? ' · required' : ''}
        </span>
        <span className="sub mono">{row.subjectId}</span>
      </td>
      <td data-label="Kind">
        <span className={`badge ${kindTone[row.kind]}`}>{kindLabels[row.kind]}</span>
        {row.attempts > 0 ? (
          <span className="sub small">
            {formatCount(row.attempts)} {row.attempts === 1 ? 'attempt' : 'attempts'}
          </span>
        ) : null}
      </td>
      <td data-label="Reason" className="small" style={{ maxWidth: 360 }} data-testid="failure-reason">
        {row.reason}
        {row.nextAttemptAt ? <span className="sub">next try {formatUtc(row.nextAttemptAt)}</span> : null}
      </td>
      <td data-label="Window closes" className="small nowrap">
        {formatUtc(row.windowLatest)}
      </td>
      {canRetry ? (
        <td data-label="Act">
          {row.retryable ? (
            open ? (
              <div className="actions">
                <input aria-label="Reason" placeholder="Reason" value={reason} onChange={(event) => setReason(event.target.value)} data-testid="retry-reason" />
                <button
                  type="button"
                  className="primary compact"
                  disabled={busy || reason.trim().length < 3}
                  onClick={() => void retry()}
                  data-testid="retry-confirm"
                >
                  Retry now
                </button>
                <button type="button" className="compact" onClick={() => setOpen(false)}>
                  Cancel
                </button>
              </div>
            ) : (
              <button type="button" className="compact" onClick={() => setOpen(true)} data-testid="retry-open">
                Retry…
              </button>
            )
          ) : (
            <span className="small muted">{row.kind === 'failed' ? 'window closed' : '—'}</span>
          )}
        </td>
      ) : null}
    </tr>
  );
}

/** A bulk retry after an outage: failed notices by error class and the time they failed; above the threshold it waits for a second person. */
function BulkRetry({ query, approvalAbove, onDone }: { query: FailuresQuery; approvalAbove: number | null; onDone: (banner: Banner) => Promise<void> }) {
  const [errorClass, setErrorClass] = useState(query.errorClass ?? '');
  const [from, setFrom] = useState(toLocal(query.from));
  const [to, setTo] = useState(toLocal(query.to));
  const [reason, setReason] = useState('');
  const [preview, setPreview] = useState<Extract<BulkRetryOutcome, { state: 'preview' }> | null>(null);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<string | null>(null);
  const filter = { errorClass: errorClass.trim(), from: from ? `${from}:00Z` : '', to: to ? `${to}:00Z` : '' };
  const complete = filter.errorClass.length > 0 && from !== '' && to !== '';

  async function run(previewOnly: boolean) {
    setBusy(true);
    setProblem(null);
    const result = await callConsole(bulkRetryContract, { filter, reason: previewOnly ? 'preview only' : reason, preview: previewOnly });
    setBusy(false);
    if (!result.ok) {
      setProblem(result.refusal.message);
      return;
    }
    const outcome = result.data;
    if (outcome.state === 'preview') {
      setPreview(outcome);
      return;
    }
    setPreview(null);
    setReason('');
    await onDone(
      outcome.state === 'retried'
        ? { tone: 'ok', text: `Retrying ${formatCount(outcome.retried)} of ${formatCount(outcome.matched)} failed notices now. Recorded in the audit log.` }
        : {
            tone: 'ok',
            text: `${formatCount(outcome.matched)} failed notices are more than ${formatCount(approvalAbove ?? 0)}: the bulk retry ${outcome.batchId} waits for a manager's approval on Replays, then runs from there.`,
          },
    );
  }

  return (
    <details className="card" data-testid="bulk-retry" open={Boolean(query.errorClass)}>
      <summary>
        <strong>Bulk retry after an outage</strong>{' '}
        <span className="small muted">
          failed notices by reason and when they failed
          {approvalAbove !== null ? `; more than ${formatCount(approvalAbove)} need a second person's approval` : ''}
        </span>
      </summary>
      <div className="row" style={{ marginTop: 12 }}>
        <div>
          <label htmlFor="bulk-error-class">Reason (error class)</label>
          <input
            id="bulk-error-class"
            list="error-classes"
            value={errorClass}
            onChange={(event) => (setErrorClass(event.target.value), setPreview(null))}
            placeholder="connect_failed"
            data-testid="bulk-error-class"
          />
        </div>
        <div>
          <label htmlFor="bulk-from">Failed from (UTC)</label>
          <input
            id="bulk-from"
            type="datetime-local"
            value={from}
            onChange={(event) => (setFrom(event.target.value), setPreview(null))}
            data-testid="bulk-from"
          />
        </div>
        <div>
          <label htmlFor="bulk-to">until (UTC)</label>
          <input id="bulk-to" type="datetime-local" value={to} onChange={(event) => (setTo(event.target.value), setPreview(null))} data-testid="bulk-to" />
        </div>
        <button type="button" disabled={!complete || busy} onClick={() => void run(true)} data-testid="bulk-preview">
          Count
        </button>
      </div>
      {preview ? (
        <div style={{ marginTop: 12 }}>
          <p data-testid="bulk-preview-result">
            <strong>{formatCount(preview.matched)}</strong> failed notice{preview.matched === 1 ? '' : 's'} with {preview.matched === 1 ? 'its' : 'their'}{' '}
            window still open {preview.matched === 1 ? 'matches' : 'match'}.{' '}
            {preview.matched === 0
              ? 'There is nothing to retry.'
              : preview.needsApproval
                ? `That is more than ${formatCount(preview.approvalAbove)}: the retry is requested now and runs once a manager approves it on Replays.`
                : 'They are retried at once.'}
          </p>
          {preview.matched > 0 ? (
            <>
              <ReasonField id="bulk-reason" testId="bulk-reason" value={reason} onChange={setReason} placeholder="e.g. relay outage 02:10–03:05 is over" />
              <button type="button" className="primary" disabled={busy || reason.trim().length < 3} onClick={() => void run(false)} data-testid="bulk-confirm">
                {preview.needsApproval ? 'Request approval' : `Retry ${formatCount(preview.matched)}`}
              </button>
            </>
          ) : null}
        </div>
      ) : null}
      {problem ? (
        <p className="notice error" data-testid="bulk-problem">
          {problem}
        </p>
      ) : null}
    </details>
  );
}
