'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import type { AuditEntryView } from '@/lib/api/console/audit';
import { listAudit } from '@/lib/api/console/audit';
import { consoleQuery } from '@/lib/http/client';
import { formatUtc, shortKey } from '@/lib/console/format';
import { Pager } from '@/components/ui/pager';
import { EmptyState, ErrorState, SkeletonLines } from '@/components/ui/states';

export type AuditQuery = { actor?: string; action?: string; target?: string; beforeAt?: string; beforeId?: number };

/** Changed fields as "before → after"; fields only one side records are shown as context. */
function Change({ entry }: { entry: AuditEntryView }) {
  const before = entry.before ?? {};
  const after = entry.after ?? {};
  const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].filter((key) => (before[key] ?? null) !== null || (after[key] ?? null) !== null);
  if (keys.length === 0) return <span className="muted">—</span>;
  const show = (value: unknown) => (value === null || value === undefined ? '∅' : String(value));
  return (
    <div className="facts">
      {keys.map((key) => {
        const inBoth = key in before && key in after;
        const changed = inBoth && JSON.stringify(before[key] ?? null) !== JSON.stringify(after[key] ?? null);
        return (
          <span key={key} className={changed ? undefined : 'muted'}>
            <b>{key}</b>{' '}
            {changed ? (
              <>
                {show(before[key])} → <strong>{show(after[key])}</strong>
              </>
            ) : (
              show(key in after ? after[key] : before[key])
            )}
          </span>
        );
      })}
    </div>
  );
}

export function AuditView({ query }: { query: AuditQuery }) {
  const list = useQuery(consoleQuery(listAudit, query));
  const filter = { actor: query.actor, action: query.action, target: query.target };
  const filtered = Boolean(query.actor || query.action || query.target);
  return (
    <>
      <form className="card row" action="/audit" method="get" data-testid="audit-filter">
        <div>
          <label htmlFor="actor">Actor (email)</label>
          <input id="actor" name="actor" defaultValue={query.actor ?? ''} placeholder="oncall@example.com" />
        </div>
        <div>
          <label htmlFor="action">Action</label>
          <input id="action" name="action" defaultValue={query.action ?? ''} placeholder="quarantine." />
        </div>
        <div className="grow">
          <label htmlFor="target">Target id</label>
          <input id="target" name="target" defaultValue={query.target ?? ''} placeholder="notice key or user id" />
        </div>
        <button type="submit">Filter</button>
        {filtered ? (
          <Link href="/audit" className="button">
            Clear
          </Link>
        ) : null}
      </form>
      {list.isPending ? (
        <div className="card">
          <SkeletonLines lines={6} />
        </div>
      ) : list.isError ? (
        <ErrorState error={list.error} retry={() => void list.refetch()} />
      ) : list.data.rows.length === 0 ? (
        <EmptyState testId="audit-empty">
          {filtered
            ? 'No audit entries match this filter. Actor is an exact email; action matches by prefix (e.g. "quarantine.").'
            : 'Nobody has changed anything yet.'}
        </EmptyState>
      ) : (
        <div className="card">
          <div className="table-wrap">
            <table className="stack" data-testid="audit-table">
              <thead>
                <tr>
                  <th>When</th>
                  <th>Who</th>
                  <th>Did what</th>
                  <th>To</th>
                  <th>Why</th>
                  <th>Before → after</th>
                </tr>
              </thead>
              <tbody>
                {list.data.rows.map((entry) => (
                  <tr key={entry.id} data-testid="audit-row" data-action={entry.action} data-target={entry.targetId}>
                    <td className="small mono nowrap" data-label="When">
                      {formatUtc(entry.at)}
                    </td>
                    <td data-label="Who">{entry.actor}</td>
                    <td data-label="Did what">
                      <span className="badge">{entry.action}</span>
                    </td>
                    <td data-label="To" className="nowrap">
                      {entry.targetType === 'notice' ? (
                        <Link className="mono small" href={`/lookup?q=${entry.targetId}`}>
                          {shortKey(entry.targetId)}
                        </Link>
                      ) : (
                        <span className="mono small">{entry.targetId}</span>
                      )}
                      <span className="sub">{entry.targetType}</span>
                    </td>
                    <td data-label="Why">{entry.reason}</td>
                    <td data-label="Change">
                      <Change entry={entry} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <Pager path="/audit" filter={filter} onFirstPage={!query.beforeId} next={list.data.next} firstLabel="Newest" nextLabel="Older" />
        </div>
      )}
    </>
  );
}
