'use client';

import { useQuery } from '@tanstack/react-query';
import Link from 'next/link';
import type { AuditEntryView, AuditPage } from '@/lib/console/audit-view';
import { formatUtc } from '@/lib/console/format';
import { getJson, toQueryString } from '../query/api';
import { queryKeys } from '../query/keys';
import { EmptyState, ErrorState, SkeletonLines } from '../ui/states';

export type AuditQuery = { actor?: string; action?: string; target?: string; beforeAt?: string; beforeId?: number };

function Change({ entry }: { entry: AuditEntryView }) {
  const keys = [...new Set([...Object.keys(entry.before ?? {}), ...Object.keys(entry.after ?? {})])];
  if (keys.length === 0) return <span className="muted">—</span>;
  return (
    <div className="facts">
      {keys.map((key) => {
        const before = entry.before?.[key];
        const after = entry.after?.[key];
        const changed = JSON.stringify(before) !== JSON.stringify(after);
        return (
          <span key={key}>
            <b>{key}</b> {changed ? <>{String(before ?? '∅')} → <strong>{String(after ?? '∅')}</strong></> : String(after ?? before ?? '∅')}
          </span>
        );
      })}
    </div>
  );
}

export function AuditView({ query }: { query: AuditQuery }) {
  const list = useQuery({ queryKey: queryKeys.audit(query), queryFn: () => getJson<AuditPage>(`/api/console/audit${toQueryString(query)}`) });
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
        <EmptyState testId="audit-empty">{filtered ? 'No audit entries match this filter. Actor is an exact email; action matches by prefix (e.g. "quarantine.").' : 'Nobody has changed anything yet.'}</EmptyState>
      ) : (
        <div className="card">
          <div className="table-wrap">
            <table data-testid="audit-table">
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
                    <td className="small mono">{formatUtc(entry.at)}</td>
                    <td>{entry.actor}</td>
                    <td>
                      <span className="badge">{entry.action}</span>
                    </td>
                    <td>
                      {entry.targetType === 'notice' ? (
                        <Link className="mono small" href={`/lookup?q=${entry.targetId}`}>
                          {entry.targetId.slice(0, 16)}…
                        </Link>
                      ) : (
                        <span className="mono small">{entry.targetId}</span>
                      )}
                      <span className="sub">{entry.targetType}</span>
                    </td>
                    <td>{entry.reason}</td>
                    <td>
                      <Change entry={entry} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div className="pager">
            {query.beforeId ? (
              <Link className="button" href={`/audit${toQueryString(filter)}`}>
                ← Newest
              </Link>
            ) : null}
            {list.data.next ? (
              <Link className="button" href={`/audit${toQueryString({ ...filter, ...list.data.next })}`}>
                Older →
              </Link>
            ) : null}
          </div>
        </div>
      )}
    </>
  );
}
