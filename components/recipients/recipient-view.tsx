'use client';

import { useState } from 'react';
import { useQuery, useQueryClient } from '@tanstack/react-query';
import { cancelNotice, changePreference, changeSuppression, getRecipient, type RecipientView } from '@/lib/api/console/recipients';
import { callConsole, consoleQuery, consoleQueryKey } from '@/lib/http/client';
import { formatUtc, shortKey } from '@/lib/console/format';
import { EmptyState, ErrorState, SkeletonLines } from '@/components/ui/states';
import { ReasonField } from '@/components/ui/reason-field';

type Pending =
  | { kind: 'suppression'; action: 'add' | 'remove' }
  | { kind: 'preference'; state: 'opted_in' | 'opted_out' }
  | { kind: 'cancel'; jobId: string; noticeType: string };

const pendingTitle = (pending: Pending): string => {
  if (pending.kind === 'suppression') return pending.action === 'add' ? 'Add to the suppression list' : 'Remove from the suppression list';
  if (pending.kind === 'preference') return pending.state === 'opted_out' ? 'Opt out of courtesy reminders' : 'Opt back in to courtesy reminders';
  return `Cancel the pending ${pending.noticeType} notice`;
};

const pendingExplain = (pending: Pending): string => {
  if (pending.kind === 'suppression') {
    return pending.action === 'add'
      ? 'No email goes to this address any more, required notices included (use it when the address is wrong or belongs to someone else; for “stop emailing me”, opt out instead).'
      : 'Mail to this address is tried again. It does not change the recipient’s preferences.';
  }
  if (pending.kind === 'preference') {
    return pending.state === 'opted_out'
      ? 'Courtesy reminders stop. Required notices (by law) are still sent.'
      : 'Courtesy reminders are sent again. Only do this when the customer asked for it.';
  }
  return 'The notice is not sent. A notice a worker has already claimed cannot be cancelled: it may already be on its way.';
};

export function RecipientPanel({ email, canManage }: { email: string; canManage: boolean }) {
  const query = useQuery({ ...consoleQuery(getRecipient, { email }), enabled: email.length > 0 });
  return (
    <>
      <form className="card row" action="/recipients" method="get" role="search" data-testid="recipient-form">
        <div className="grow">
          <label htmlFor="email">Recipient email</label>
          <input id="email" name="email" type="email" defaultValue={email} placeholder="jane@example.com" autoFocus={email.length === 0} />
        </div>
        <button type="submit" className="primary">
          Open
        </button>
      </form>
      {email.length === 0 ? (
        <EmptyState>Type the customer’s email to see their suppression, their preferences and their pending notices.</EmptyState>
      ) : query.isPending ? (
        <div className="card">
          <SkeletonLines lines={6} />
        </div>
      ) : query.isError ? (
        <ErrorState error={query.error} retry={() => void query.refetch()} />
      ) : (
        <Recipient view={query.data} canManage={canManage} />
      )}
    </>
  );
}

function Recipient({ view, canManage }: { view: RecipientView; canManage: boolean }) {
  const client = useQueryClient();
  const [pending, setPending] = useState<Pending | null>(null);
  const [reason, setReason] = useState('');
  const [busy, setBusy] = useState(false);
  const [message, setMessage] = useState<{ tone: 'ok' | 'error'; text: string } | null>(null);
  const courtesy = view.preferences.find((row) => row.category === 'courtesy');

  function start(next: Pending) {
    setPending(next);
    setReason('');
    setMessage(null);
  }

  async function confirm() {
    if (!pending) return;
    setBusy(true);
    const key = consoleQueryKey(getRecipient, { email: view.email });
    let text: string;
    let failed: string | null = null;
    if (pending.kind === 'suppression') {
      const result = await callConsole(changeSuppression, { email: view.email, action: pending.action, reason: reason.trim() });
      if (result.ok) client.setQueryData(key, result.data.view);
      else failed = result.refusal.message;
      text = result.ok && !result.data.changed ? 'Nothing to change: it already was so.' : `${pendingTitle(pending)}: done, and audited.`;
    } else if (pending.kind === 'preference') {
      const result = await callConsole(changePreference, { email: view.email, category: 'courtesy', state: pending.state, reason: reason.trim() });
      if (result.ok) client.setQueryData(key, result.data.view);
      else failed = result.refusal.message;
      text = result.ok && !result.data.changed ? 'Nothing to change: it already was so.' : `${pendingTitle(pending)}: done, and audited.`;
    } else {
      const result = await callConsole(cancelNotice, { jobId: pending.jobId, reason: reason.trim() });
      if (!result.ok) failed = result.refusal.message;
      await client.invalidateQueries({ queryKey: key });
      text = 'The notice is cancelled, and the cancellation audited.';
    }
    setBusy(false);
    setMessage(failed ? { tone: 'error', text: failed } : { tone: 'ok', text });
    if (!failed) setPending(null);
  }

  return (
    <div data-testid="recipient-view" data-email={view.email}>
      {message ? (
        <div
          className={`notice ${message.tone === 'error' ? 'error' : ''}`}
          data-testid={message.tone === 'error' ? 'recipient-error' : 'recipient-done'}
          style={{ marginBottom: 16 }}
        >
          {message.text}
        </div>
      ) : null}
      <section className="card" data-testid="recipient-status">
        <div className="page-head" style={{ marginBottom: 8 }}>
          <div>
            <h2 style={{ marginBottom: 2 }}>{view.email}</h2>
            <span className="small muted">
              <a href={`/lookup?q=${encodeURIComponent(view.email)}`}>All notices for this address in Lookup</a>
            </span>
          </div>
        </div>
        <dl className="kv">
          <dt>Suppression list</dt>
          <dd data-testid="recipient-suppression">
            {view.suppression ? (
              <>
                <span className="badge bad">{view.suppression.reason.replaceAll('_', ' ')}</span> {view.suppression.text}
                <span className="muted small"> · since {formatUtc(view.suppression.since)}</span>
                {view.suppression.note ? <div className="small muted">{view.suppression.note}</div> : null}
              </>
            ) : (
              <span className="badge good">not suppressed</span>
            )}
            {canManage ? (
              <div className="actions" style={{ marginTop: 6 }}>
                {view.suppression ? (
                  <button type="button" onClick={() => start({ kind: 'suppression', action: 'remove' })} data-testid="suppression-remove">
                    Remove from the list
                  </button>
                ) : (
                  <button type="button" className="danger" onClick={() => start({ kind: 'suppression', action: 'add' })} data-testid="suppression-add">
                    Add to the list
                  </button>
                )}
              </div>
            ) : null}
          </dd>
          {view.preferences.map((row) => (
            <PreferenceRow key={row.category} row={row} />
          ))}
        </dl>
        {canManage && courtesy ? (
          <div className="actions" style={{ marginTop: 6 }}>
            {courtesy.state === 'opted_out' ? (
              <button type="button" onClick={() => start({ kind: 'preference', state: 'opted_in' })} data-testid="preference-opt-in">
                Opt back in to courtesy reminders
              </button>
            ) : (
              <button type="button" onClick={() => start({ kind: 'preference', state: 'opted_out' })} data-testid="preference-opt-out">
                Opt out of courtesy reminders
              </button>
            )}
          </div>
        ) : null}
      </section>

      {pending ? (
        <div className={`confirm ${pending.kind === 'preference' ? '' : 'danger'}`} data-testid="recipient-confirm">
          <h3>{pendingTitle(pending)}</h3>
          <p className="small">{pendingExplain(pending)}</p>
          <ReasonField
            id="recipient-reason"
            testId="recipient-reason"
            value={reason}
            onChange={setReason}
            placeholder="What the customer said, or the ticket number"
          />
          <div className="actions">
            <button
              type="button"
              className={pending.kind === 'preference' ? 'primary' : 'danger'}
              disabled={busy || reason.trim().length < 3}
              onClick={() => void confirm()}
              data-testid="recipient-confirm-button"
            >
              {busy ? 'Working…' : 'Confirm'}
            </button>
            <button type="button" onClick={() => setPending(null)} disabled={busy}>
              Back
            </button>
          </div>
        </div>
      ) : null}

      <section className="card table-wrap" data-testid="recipient-open-notices">
        <h3>Pending notices</h3>
        {view.openNotices.length === 0 ? (
          <p className="muted small">Nothing pending for this address.</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th>Notice</th>
                <th>Type</th>
                <th>Due</th>
                <th>State</th>
                {canManage ? <th /> : null}
              </tr>
            </thead>
            <tbody>
              {view.openNotices.map((notice) => (
                <tr key={notice.jobId} data-testid="open-notice" data-job-id={notice.jobId}>
                  <td>
                    <a className="mono" href={`/lookup?q=${notice.noticeKey}`}>
                      {shortKey(notice.noticeKey)}
                    </a>
                  </td>
                  <td className="small">
                    <span className="mono">{notice.noticeType}</span>{' '}
                    <span className={`badge ${notice.category === 'required' ? 'warn' : ''}`}>{notice.category}</span>
                  </td>
                  <td className="small">{formatUtc(notice.dueAt)}</td>
                  <td>
                    <span className={`badge ${notice.state === 'claimed' ? 'bad' : ''}`}>{notice.state}</span>
                  </td>
                  {canManage ? (
                    <td>
                      <button
                        type="button"
                        className="danger"
                        onClick={() => start({ kind: 'cancel', jobId: notice.jobId, noticeType: notice.noticeType })}
                        data-testid="cancel-notice"
                      >
                        Cancel…
                      </button>
                    </td>
                  ) : null}
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      <section className="card table-wrap" data-testid="recipient-history">
        <h3>Preference history</h3>
        {view.history.length === 0 ? (
          <p className="muted small">No change recorded: the recipient receives courtesy reminders (the default).</p>
        ) : (
          <table>
            <thead>
              <tr>
                <th>When</th>
                <th>What</th>
                <th className="hide-sm">By</th>
                <th className="hide-sm">Reason</th>
              </tr>
            </thead>
            <tbody>
              {view.history.map((row, index) => (
                <tr key={`${row.at}-${index}`} data-testid="history-row" data-source={row.source}>
                  <td className="small">{formatUtc(row.at)}</td>
                  <td>{row.text}</td>
                  <td className="hide-sm small mono">{row.actor ?? '—'}</td>
                  <td className="hide-sm small">{row.reason ?? '—'}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>

      <section className="card" data-testid="recipient-audit">
        <h3>Changes made by staff</h3>
        {view.audit.length === 0 ? (
          <p className="muted small">None.</p>
        ) : (
          <ul className="small">
            {view.audit.map((row, index) => (
              <li key={`${row.at}-${index}`}>
                <span className="muted">{formatUtc(row.at)}</span> <b>{row.actor}</b> {row.action} — {row.reason ?? 'no reason'}{' '}
                <span className="muted">({row.summary})</span>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}

function PreferenceRow({ row }: { row: RecipientView['preferences'][number] }) {
  const tone = row.state === 'opted_out' ? 'warn' : row.state === 'required' ? '' : 'good';
  return (
    <>
      <dt>{row.category === 'required' ? 'Required notices' : 'Courtesy reminders'}</dt>
      <dd data-testid={`preference-${row.category}`} data-state={row.state}>
        <span className={`badge ${tone}`}>{row.state.replaceAll('_', ' ')}</span> {row.text}
        {row.changedAt ? <span className="muted small"> · since {formatUtc(row.changedAt)}</span> : null}
      </dd>
    </>
  );
}
