import type { Metadata } from 'next';
import { getDb } from '@/lib/process-db';
import { can } from '@/lib/auth/permissions';
import { deliveryLogQuery } from '@/lib/api/console/webhooks';
import { formatUtc } from '@/lib/console/format';
import { loadDeliveryLog, loadWebhookEndpoints } from '@/lib/console/webhooks';
import { CreateEndpointForm, EndpointActions, ReplayOneButton, ReplayRangeForm } from '@/components/webhooks/webhook-forms';
import { Pager } from '@/components/ui/pager';
import { EmptyState, Forbidden } from '@/components/ui/states';
import { requirePage } from '@/app/_server/auth';

export const metadata: Metadata = { title: 'Webhooks' };
export const dynamic = 'force-dynamic';

function stateOf(endpoint: { enabled: boolean; failingSince: string | null; disabledReason: string | null }) {
  if (!endpoint.enabled)
    return (
      <span className="badge bad">disabled{endpoint.disabledReason === 'gone' ? ': 410 Gone' : endpoint.disabledReason === 'failing' ? ': failing' : ''}</span>
    );
  if (endpoint.failingSince) return <span className="badge warn">failing since {formatUtc(endpoint.failingSince)}</span>;
  return <span className="badge good">enabled</span>;
}

export default async function WebhooksPage({ searchParams }: { searchParams: Promise<Record<string, string | undefined>> }) {
  const auth = await requirePage('webhooks.read', '/webhooks');
  if (!auth.ok) return <Forbidden message={auth.refusal.message} />;
  const manage = can(auth.session.user.role, 'webhooks.manage');
  const raw = Object.fromEntries(Object.entries(await searchParams).filter(([, value]) => value !== undefined && value !== ''));
  const parsed = deliveryLogQuery.safeParse(raw);
  const query = parsed.success ? parsed.data : { limit: 50 };
  const [endpoints, log] = await Promise.all([loadWebhookEndpoints(getDb()), loadDeliveryLog(getDb(), query)]);
  const filter = { endpoint: query.endpoint, notice: query.notice };
  const filtered = endpoints.find((endpoint) => endpoint.id === query.endpoint);
  return (
    <>
      <div className="page-head">
        <div>
          <h1>Webhooks</h1>
          <p>
            Where the ledger&apos;s events go (Standard Webhooks v1, at least once, from the outbox). Each attempt is logged with its status, latency and error
            class; never a secret or a body. {manage ? 'Every change and replay is audited.' : 'Admins manage endpoints.'}
          </p>
        </div>
      </div>
      {parsed.success ? null : (
        <div className="banner warning" role="status">
          The filter in the address is not valid ({parsed.error.issues[0]?.message}); showing the whole log.
        </div>
      )}
      <section className="card" data-testid="webhook-endpoints">
        <h2>Endpoints</h2>
        {endpoints.length === 0 ? (
          <EmptyState>No endpoint yet: producers hear nothing until one is added (here or POST /api/v1/webhook-endpoints).</EmptyState>
        ) : (
          <div className="table-wrap">
            <table className="stack">
              <thead>
                <tr>
                  <th>URL</th>
                  <th>Events</th>
                  <th>State</th>
                  <th title="pending / delivered / failed for good">Deliveries</th>
                  <th>Keys</th>
                  <th />
                </tr>
              </thead>
              <tbody>
                {endpoints.map((endpoint) => (
                  <tr key={endpoint.id} data-testid="webhook-endpoint-row" data-endpoint={endpoint.id}>
                    <td data-label="URL" className="mono small">
                      {endpoint.url}
                      {endpoint.description ? <div className="muted">{endpoint.description}</div> : null}
                    </td>
                    <td data-label="Events" className="small mono">
                      {endpoint.eventTypes.length === 12 ? 'all' : endpoint.eventTypes.join(', ')}
                    </td>
                    <td data-label="State" data-testid="webhook-endpoint-state">
                      {stateOf(endpoint)}
                    </td>
                    <td data-label="Deliveries" className="small" data-testid="webhook-endpoint-counts">
                      {endpoint.deliveries.pending} / {endpoint.deliveries.delivered} / {endpoint.deliveries.failed}
                    </td>
                    <td data-label="Keys" className="small mono">
                      {endpoint.keys.map((key) => (
                        <div key={key.keyId}>
                          {key.keyId}
                          {key.expiresAt ? ` (until ${formatUtc(key.expiresAt)})` : ''}
                        </div>
                      ))}
                    </td>
                    <td>
                      <a href={`/webhooks?endpoint=${endpoint.id}`} data-testid="webhook-log-link">
                        Delivery log
                      </a>
                      {manage ? <EndpointActions id={endpoint.id} url={endpoint.url} enabled={endpoint.enabled} /> : null}
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </section>
      {manage ? <CreateEndpointForm /> : null}
      <section className="card" data-testid="webhook-log">
        <h2>
          Delivery log
          {filtered ? ` — ${filtered.url}` : ''}
          {query.notice ? ` — notice ${query.notice}` : ''}
        </h2>
        {query.endpoint || query.notice ? (
          <p className="small">
            <a href="/webhooks">Show every endpoint and notice</a>
          </p>
        ) : null}
        {log.attempts.length === 0 ? (
          <EmptyState>No attempt yet.</EmptyState>
        ) : (
          <div className="table-wrap">
            <table className="stack">
              <thead>
                <tr>
                  <th>At</th>
                  <th>Endpoint</th>
                  <th>Event</th>
                  <th>Notice</th>
                  <th>Attempt</th>
                  <th>Status</th>
                  <th>Latency</th>
                  <th>Error</th>
                  <th>Delivery</th>
                  {manage ? <th /> : null}
                </tr>
              </thead>
              <tbody>
                {log.attempts.map((attempt) => (
                  <tr key={attempt.id} data-testid="webhook-attempt-row" data-webhook-id={attempt.webhookId}>
                    <td data-label="At" className="small">
                      {formatUtc(attempt.at)}
                    </td>
                    <td data-label="Endpoint" className="small mono">
                      {attempt.endpointUrl}
                    </td>
                    <td data-label="Event" className="small mono">
                      {attempt.type} #{attempt.sequence}
                      <div className="muted">{attempt.webhookId}</div>
                    </td>
                    <td data-label="Notice" className="small mono">
                      {attempt.jobId ? <a href={`/webhooks?notice=${attempt.jobId}`}>{attempt.jobId.slice(0, 8)}…</a> : '—'}
                    </td>
                    <td data-label="Attempt">{attempt.attempt}</td>
                    <td data-label="Status" data-testid="webhook-attempt-status">
                      {attempt.status ?? '—'}
                    </td>
                    <td data-label="Latency" className="small">
                      {attempt.latencyMs} ms
                    </td>
                    <td data-label="Error" className="small mono">
                      {attempt.error ?? ''}
                    </td>
                    <td data-label="Delivery" className="small" data-testid="webhook-attempt-state">
                      {attempt.deliveryState}
                    </td>
                    {manage ? (
                      <td>
                        <ReplayOneButton endpointId={attempt.endpointId} eventId={attempt.eventId} />
                      </td>
                    ) : null}
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <Pager
          path="/webhooks"
          filter={filter}
          onFirstPage={!query.before}
          next={log.next ? { ...filter, before: log.next } : null}
          firstLabel="Newest"
          nextLabel="Older"
          nextTestId="webhook-log-older"
        />
      </section>
      {manage ? <ReplayRangeForm endpoints={endpoints.map((endpoint) => ({ id: endpoint.id, url: endpoint.url }))} /> : null}
    </>
  );
}
