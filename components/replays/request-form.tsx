'use client';

import { useState } from 'react';
import { toCsv } from '@/lib/replay/csv';
import { dryRunReplayContract, requestReplayContract, type DryRunAnswer } from '@/lib/api/console/replays';
import { callConsole } from '@/lib/http/client';
import { formatPercent } from '@/lib/replay/verdict';

/** A configured notice type, as the server page reads it from NOTICE_CONFIG. */
export type NoticeTypeOption = { name: string; label: string };

/** datetime-local carries no zone; the form means UTC, as every time on the console does. */
function toIso(local: string): string | undefined {
  return local ? `${local.length === 16 ? `${local}:00` : local}Z` : undefined;
}

function download(name: string, text: string) {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = name;
  link.click();
  URL.revokeObjectURL(url);
}

export function RequestForm({ noticeTypes, onRequested }: { noticeTypes: NoticeTypeOption[]; onRequested: (text: string) => void }) {
  const [mode, setMode] = useState<'filter' | 'csv'>('filter');
  const [dueFrom, setDueFrom] = useState('');
  const [dueTo, setDueTo] = useState('');
  const [noticeType, setNoticeType] = useState('');
  const [source, setSource] = useState('');
  const [csv, setCsv] = useState<{ name: string; text: string } | null>(null);
  const [reason, setReason] = useState('');
  const [dryRun, setDryRun] = useState<DryRunAnswer | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const selection = () =>
    mode === 'csv'
      ? { csv: csv?.text ?? '' }
      : {
          filter: Object.fromEntries(
            Object.entries({ dueFrom: toIso(dueFrom), dueTo: toIso(dueTo), noticeType: noticeType || undefined, source: source.trim() || undefined }).filter(
              ([, value]) => value !== undefined,
            ),
          ),
        };

  const changed = () => {
    setDryRun(null);
    setError(null);
  };

  async function runDryRun() {
    setBusy(true);
    const result = await callConsole(dryRunReplayContract, selection());
    setBusy(false);
    if (result.ok) {
      setDryRun(result.data);
      setError(null);
    } else setError(result.refusal.message);
  }

  async function submit() {
    setBusy(true);
    const result = await callConsole(requestReplayContract, { ...selection(), reason });
    setBusy(false);
    if (!result.ok) {
      setError(result.refusal.message);
      return;
    }
    setDryRun(null);
    setReason('');
    onRequested(`Requested replay ${result.data.batchId}. A manager other than you must approve it before it can run.`);
  }

  const existing = dryRun ? Object.entries(dryRun.counts.existing) : [];
  return (
    <section className="card" data-testid="replay-request">
      <h2>Request a replay</h2>
      <p className="muted small">
        A replay re-publishes wake-ups as an ordinary producer; the ledger refuses every notice that already went out. Dry-run first.
      </p>
      <div className="segmented" role="group" aria-label="Replay source">
        <button type="button" aria-pressed={mode === 'filter'} onClick={() => (setMode('filter'), changed())}>
          Filter jobs
        </button>
        <button type="button" aria-pressed={mode === 'csv'} onClick={() => (setMode('csv'), changed())}>
          Upload CSV
        </button>
      </div>
      {mode === 'filter' ? (
        <div className="row" style={{ marginTop: 12 }}>
          <div className="field">
            <label htmlFor="replay-due-from">Due from (UTC)</label>
            <input id="replay-due-from" type="datetime-local" value={dueFrom} onChange={(event) => (setDueFrom(event.target.value), changed())} />
          </div>
          <div className="field">
            <label htmlFor="replay-due-to">Due before (UTC)</label>
            <input id="replay-due-to" type="datetime-local" value={dueTo} onChange={(event) => (setDueTo(event.target.value), changed())} />
          </div>
          <div className="field">
            <label htmlFor="replay-type">Notice type</label>
            <select id="replay-type" value={noticeType} onChange={(event) => (setNoticeType(event.target.value), changed())}>
              <option value="">any</option>
              {noticeTypes.map((type) => (
                <option key={type.name} value={type.name} title={type.label}>
                  {type.name}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="replay-source">Source / producer</label>
            <input id="replay-source" value={source} placeholder="billing-scheduler" onChange={(event) => (setSource(event.target.value), changed())} />
          </div>
        </div>
      ) : (
        <div className="field" style={{ marginTop: 12 }}>
          <label htmlFor="replay-csv">Upstream jobs (CSV)</label>
          <input
            id="replay-csv"
            type="file"
            accept=".csv,text/csv"
            onChange={async (event) => {
              const file = event.target.files?.[0];
              changed();
              setCsv(file ? { name: file.name, text: await file.text() } : null);
            }}
          />
          <p className="small muted">
            Columns: notice_type, the type&apos;s identity fields (subscription_id, period_start or account_id, reconciliation_id, exception_id), revision,
            recipient_email, recipient_time_zone, recipient_locale (BCP 47, such as de-AT), recipient_phone (E.164, for types that go by SMS), due_at,
            deadline_at, anchor_at (the charge, ISO with offset: required when the template shows it), customer_id, evidence_ref, payload (JSON with every
            variable the type&apos;s template declares, as on the Templates page). Each row is checked on its own, as the producer API checks a request; refused
            rows are listed with the reason and the field (payload.amount: …).
          </p>
        </div>
      )}
      <div className="actions">
        <button type="button" disabled={busy || (mode === 'csv' && !csv)} onClick={() => void runDryRun()} data-testid="dry-run">
          Dry run
        </button>
      </div>
      {error ? (
        <div className="notice error" role="alert" data-testid="replay-error" style={{ marginTop: 12 }}>
          {error}
        </div>
      ) : null}
      {dryRun ? (
        <div style={{ marginTop: 12 }} data-testid="dry-run-result">
          <div
            className={`banner ${dryRun.verdict.kind === 'already_delivered' || dryRun.verdict.kind === 'empty' ? 'warning' : 'ok'}`}
            data-testid="dry-run-verdict"
          >
            {dryRun.verdict.message}
          </div>
          <dl className="kv">
            <dt>Keys</dt>
            <dd data-testid="dry-run-total">{dryRun.counts.total}</dd>
            <dt>New (not in the ledger)</dt>
            <dd data-testid="dry-run-new-keys">{dryRun.counts.newKeys}</dd>
            <dt>Already in the ledger</dt>
            <dd>{existing.length === 0 ? 'none' : existing.map(([state, count]) => `${state}: ${count}`).join(', ')}</dd>
            <dt>Would send</dt>
            <dd>
              {dryRun.verdict.wouldSend} ({formatPercent(dryRun.verdict.share)})
            </dd>
            {dryRun.accepted !== null ? (
              <>
                <dt>Rows</dt>
                <dd>
                  {dryRun.accepted} accepted, {dryRun.rejections.length} rejected{' '}
                  {dryRun.rejections.length > 0 ? (
                    <button
                      type="button"
                      className="compact"
                      onClick={() =>
                        download(
                          `${csv?.name ?? 'upload'}.rejected.csv`,
                          toCsv([['line', 'reason', 'row'], ...dryRun.rejections.map((r) => [String(r.line), r.reason, r.raw])]),
                        )
                      }
                      data-testid="download-rejected"
                    >
                      Download rejected rows
                    </button>
                  ) : null}
                </dd>
              </>
            ) : null}
            <dt>Took</dt>
            <dd>{dryRun.elapsedMs} ms</dd>
          </dl>
          {dryRun.counts.total > 0 ? (
            <div className="row">
              <div className="grow field">
                <label htmlFor="replay-reason">Reason (shown to the approving manager, kept in the audit log)</label>
                <input id="replay-reason" value={reason} onChange={(event) => setReason(event.target.value)} />
              </div>
              <button type="button" className="primary" disabled={busy || reason.trim().length < 3} onClick={() => void submit()} data-testid="request-replay">
                Request replay
              </button>
            </div>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}
