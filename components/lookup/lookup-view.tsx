'use client';

import { useQuery } from '@tanstack/react-query';
import { lookupNoticesContract, type LookupResult, type NoticeView, type NoticeWindow } from '@/lib/api/console/lookup';
import { formatUtc, shortKey } from '@/lib/console/format';
import { consoleQuery } from '@/lib/http/client';
import { EmptyState, ErrorState, SkeletonLines } from '@/components/ui/states';
import { EvidencePackButton } from './evidence-pack-button';
import { ReceivedMessagePanel } from './received-message';

function stateBadge(state: string | null) {
  if (!state) return <span className="badge">none</span>;
  const tone = state === 'sent' ? 'good' : state === 'claimed' || state === 'failed' ? 'bad' : state === 'suppressed' || state === 'released' ? 'warn' : '';
  return <span className={`badge ${tone}`}>{state}</span>;
}

export function LookupView({ q }: { q: string }) {
  const query = useQuery({ ...consoleQuery(lookupNoticesContract, { q }), enabled: q.length > 0 });
  return (
    <>
      <form className="card row" action="/lookup" method="get" role="search" data-testid="lookup-form">
        <div className="grow">
          <label htmlFor="q">Email, customer / account / subscription id, +phone, notice key, Message-ID or provider id</label>
          <input id="q" name="q" defaultValue={q} placeholder="jane@example.com, sub_123, <3f2a…@notices.example.com>" autoFocus={q.length === 0} />
        </div>
        <button type="submit" className="primary">
          Search
        </button>
      </form>
      {q.length === 0 ? (
        <EmptyState>Type what the customer told you: their email, account or subscription id, or paste the Message-ID from the email headers.</EmptyState>
      ) : query.isPending ? (
        <div className="card">
          <SkeletonLines lines={6} />
        </div>
      ) : query.isError ? (
        <ErrorState error={query.error} retry={() => void query.refetch()} />
      ) : query.data.matches.length === 0 ? (
        <EmptyState testId="lookup-empty">
          Nothing matches <strong>{q}</strong> ({query.data.describe}). Check the spelling; emails are matched exactly (any case), keys by prefix of 8 or more
          characters. The notice may not have been scheduled yet: ask the producing team for the subscription or account id.
        </EmptyState>
      ) : (
        <Results result={query.data} />
      )}
    </>
  );
}

function Results({ result }: { result: LookupResult }) {
  return (
    <>
      <p className="muted" data-testid="lookup-summary">
        {result.matches.length} notice{result.matches.length === 1 ? '' : 's'} for {result.describe}
        {result.truncated ? ' (showing the first 50: narrow the search)' : ''}.
      </p>
      {result.matches.length > 1 ? (
        <div className="card table-wrap">
          <table>
            <thead>
              <tr>
                <th>Notice</th>
                <th>Type</th>
                <th className="hide-sm">Subject</th>
                <th>Due</th>
                <th>Ledger</th>
              </tr>
            </thead>
            <tbody>
              {result.matches.map((match) => (
                <tr key={match.noticeKey}>
                  <td>
                    <a href={`#n-${match.noticeKey.slice(0, 16)}`} className="mono">
                      {shortKey(match.noticeKey)}
                    </a>
                  </td>
                  <td className="mono small">{match.noticeType}</td>
                  <td className="hide-sm">{match.subjectId ?? '—'}</td>
                  <td className="small">{formatUtc(match.dueAt)}</td>
                  <td>{stateBadge(match.ledgerState)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      {result.notices.map((notice) => (
        <NoticeCard key={notice.noticeKey} notice={notice} />
      ))}
    </>
  );
}

function NoticeCard({ notice }: { notice: NoticeView }) {
  return (
    <section className="card" id={`n-${notice.noticeKey.slice(0, 16)}`} data-testid="notice-card" data-notice-key={notice.noticeKey}>
      <div className="page-head" style={{ marginBottom: 8 }}>
        <div>
          <h2 style={{ marginBottom: 2 }}>{notice.label}</h2>
          <span className="mono small muted">{notice.noticeKey}</span>
        </div>
        <div className="actions">
          <span className="small muted">ledger</span>
          {stateBadge(notice.ledgerState)}
          <span className="small muted">job</span>
          {stateBadge(notice.jobState)}
          {notice.timeline.some((entry) => entry.kind === 'evidence' && entry.title.startsWith('Evidence recorded')) ? (
            <EvidencePackButton noticeKey={notice.noticeKey} />
          ) : null}
        </div>
      </div>
      <p className="verdict" data-testid="verdict">
        {notice.verdict}
      </p>
      <dl className="kv">
        <dt>Recipient</dt>
        <dd>
          {notice.recipientEmail ?? '—'}
          {notice.recipientEmail ? (
            <a className="small" style={{ marginLeft: 8 }} href={`/recipients?email=${encodeURIComponent(notice.recipientEmail)}`} data-testid="recipient-link">
              suppressions, preferences, cancel
            </a>
          ) : null}
        </dd>
        <dt>Channel</dt>
        <dd data-testid="channel">
          {notice.channel === 'sms' ? 'Text message (SMS)' : notice.channel === 'email' ? 'Email' : '—'}
          {notice.channel === 'sms' && notice.recipientPhone ? <span className="mono"> · {notice.recipientPhone}</span> : null}
        </dd>
        <dt>Subject</dt>
        <dd>
          {notice.subjectId ?? '—'}
          {notice.customerId ? <span className="muted"> · customer {notice.customerId}</span> : null}
        </dd>
        <dt>Due / deadline</dt>
        <dd>
          {formatUtc(notice.dueAt)} / {formatUtc(notice.deadlineAt)}
        </dd>
        {notice.channel === 'sms' ? null : (
          <>
            <dt>Message-ID</dt>
            <dd className="mono">{notice.messageId}</dd>
          </>
        )}
        <dt>Provider id</dt>
        <dd className="mono">{notice.providerMessageId ?? '—'}</dd>
        <dt>Scheduled by</dt>
        <dd>
          {notice.source ?? '—'}
          {notice.batchId ? <span className="muted"> · batch {notice.batchId}</span> : null}
        </dd>
      </dl>
      {notice.window ? <SendWindow window={notice.window} /> : null}
      <details data-testid="key-derivation">
        <summary>How this notice&apos;s key was derived</summary>
        <p className="small">
          key = HMAC-SHA256(NOTICE_KEY_SECRET, canonical(type, identity fields, revision)). Nothing that changes on a replay (message id, attempt, scheduled
          time, batch) is part of it.
        </p>
        <dl className="kv">
          <dt>type</dt>
          <dd className="mono">{notice.derivation.noticeType}</dd>
          {notice.derivation.fields.map((field) => (
            <span key={field.name} style={{ display: 'contents' }}>
              <dt className="mono">{field.name}</dt>
              <dd className="mono">{field.value}</dd>
            </span>
          ))}
          <dt>revision</dt>
          <dd className="mono">{notice.derivation.revision}</dd>
          <dt>canonical</dt>
          <dd className="mono small">{notice.derivation.canonical ?? 'not a known notice type'}</dd>
          <dt>check</dt>
          <dd>
            {notice.derivation.verified === true ? (
              <span className="badge good">recomputed key matches</span>
            ) : notice.derivation.verified === false ? (
              <span className="badge bad">recomputed key differs: written with another secret</span>
            ) : (
              '—'
            )}
          </dd>
        </dl>
      </details>
      <h3 style={{ marginTop: 12 }}>Timeline</h3>
      {notice.timeline.length === 0 ? (
        <EmptyState>Nothing recorded yet for this notice.</EmptyState>
      ) : (
        <ol className="timeline" data-testid="timeline">
          {notice.timeline.map((entry, index) => (
            <li key={`${entry.at}-${index}`} className={entry.tone} data-testid="timeline-entry" data-kind={entry.kind}>
              <div className="when">{formatUtc(entry.at)}</div>
              <div className="what">{entry.title}</div>
              {entry.facts.length > 0 ? (
                <div className="facts">
                  {entry.facts.map((fact) => (
                    <span key={fact.label}>
                      <b>{fact.label}</b> <span className={fact.value.length > 20 ? 'mono' : undefined}>{fact.value}</span>
                    </span>
                  ))}
                </div>
              ) : null}
              {entry.kind === 'message' ? <ReceivedMessagePanel noticeKey={notice.noticeKey} /> : null}
            </li>
          ))}
        </ol>
      )}
    </section>
  );
}

function SendWindow({ window }: { window: NoticeWindow }) {
  const missed = window.events.some((entry) => entry.kind === 'window_missed');
  return (
    <section data-testid="send-window" style={{ marginBottom: 12 }}>
      <h3>
        Send window <span className={`badge ${window.category === 'required' ? 'warn' : ''}`}>{window.category}</span>
        {missed ? <span className="badge bad">window missed</span> : null}
      </h3>
      <p className="small" data-testid="window-status">
        {window.status}
      </p>
      <dl className="kv">
        <dt>Earliest</dt>
        <dd data-testid="window-earliest">
          {window.earliestLocal} <span className="muted">· {formatUtc(window.earliest)}</span>
        </dd>
        <dt>Latest</dt>
        <dd data-testid="window-latest">
          {window.latestLocal} <span className="muted">· {formatUtc(window.latest)}</span>
        </dd>
        <dt>Set by</dt>
        <dd data-testid="window-set-by">{window.setBy}</dd>
        {window.ruleIds.length > 0 ? (
          <>
            <dt>Rules</dt>
            <dd className="mono small" data-testid="window-rules">
              {window.ruleIds.join(', ')}
              {window.ruleSetVersion ? <span className="muted"> · {window.ruleSetVersion}</span> : null}
            </dd>
          </>
        ) : null}
        {window.event ? (
          <>
            <dt>Business event</dt>
            <dd data-testid="window-event">
              <span className="mono small">{window.event.type}</span> revision {window.event.revision} · anchor {window.event.anchorLocal}{' '}
              <span className="muted">· from {window.event.source}</span>
            </dd>
          </>
        ) : null}
      </dl>
      {window.events.length > 0 ? (
        <ul className="small" data-testid="window-events">
          {window.events.map((entry, index) => (
            <li key={`${entry.at}-${index}`} data-kind={entry.kind}>
              <span className="muted">{formatUtc(entry.at)}</span> {entry.text}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  );
}
