'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { createTokenContract, listTokensContract, revokeTokenContract, tokenScopeNames, type TokenView } from '@/lib/api/console/tokens';
import { formatUtc } from '@/lib/console/format';
import { callConsole, consoleQuery, consoleQueryKey } from '@/lib/http/client';
import { EmptyState, ErrorState, SkeletonLines } from '@/components/ui/states';

export function TokensAdmin() {
  const queryClient = useQueryClient();
  const list = useQuery(consoleQuery(listTokensContract, {}));
  const [created, setCreated] = useState<{ name: string; token: string } | null>(null);
  const [message, setMessage] = useState<{ tone: 'ok' | 'critical'; text: string } | null>(null);

  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    // Read before the await: React clears currentTarget once the handler has returned.
    const formElement = event.currentTarget;
    const form = new FormData(formElement);
    const name = String(form.get('name') ?? '');
    const scopes = tokenScopeNames.filter((scope) => form.get(`scope-${scope}`) === 'on');
    const expiresOn = String(form.get('expires') ?? '');
    // A date input gives a day: the token works through that whole day, UTC.
    const expiresAt = expiresOn ? `${expiresOn}T23:59:59.000Z` : null;
    const result = await callConsole(createTokenContract, { name, reason: String(form.get('reason') ?? ''), scopes, expiresAt });
    if (!result.ok) {
      setMessage({ tone: 'critical', text: result.refusal.message });
      return;
    }
    setMessage(null);
    setCreated({ name, token: result.data.token });
    formElement.reset();
    await queryClient.invalidateQueries({ queryKey: consoleQueryKey(listTokensContract, {}) });
  }

  async function revoke(token: TokenView) {
    const reason = window.prompt(`Why revoke ${token.name} (nlk_${token.prefix}_…)? Producers using it will get 401 at once.`);
    if (!reason || reason.trim().length < 3) return;
    const result = await callConsole(revokeTokenContract, { id: token.id, reason: reason.trim() });
    setMessage(result.ok ? { tone: 'ok', text: `Revoked ${token.name}.` } : { tone: 'critical', text: result.refusal.message });
    await queryClient.invalidateQueries({ queryKey: consoleQueryKey(listTokensContract, {}) });
  }

  return (
    <section className="card" data-testid="tokens-admin">
      <h2>Producer API tokens</h2>
      <p className="muted small">
        Producers send these as <code>Authorization: Bearer …</code>. Only a hash is stored: a new token is shown once, here.
      </p>
      {created ? (
        <div className="banner warning" data-testid="new-token">
          <span>
            Copy the token for <strong>{created.name}</strong> now; it will not be shown again:
            <br />
            <code style={{ userSelect: 'all' }}>{created.token}</code>
          </span>
        </div>
      ) : null}
      {message ? <div className={`banner ${message.tone}`}>{message.text}</div> : null}
      <form onSubmit={(event) => void create(event)} style={{ marginBottom: 16 }}>
        <div className="row">
          <div>
            <label htmlFor="token-name">Name (which producer)</label>
            <input id="token-name" name="name" required placeholder="billing-service" />
          </div>
          <div className="grow">
            <label htmlFor="token-reason">Reason (audited)</label>
            <input id="token-reason" name="reason" required minLength={3} placeholder="billing-service moves to the v1 API" />
          </div>
          <div>
            <label htmlFor="token-expires">Expires (optional, UTC day)</label>
            <input id="token-expires" name="expires" type="date" />
          </div>
        </div>
        <fieldset data-testid="token-scopes" style={{ margin: '12px 0', border: '1px solid #d5dbe5', borderRadius: 6, padding: '8px 12px' }}>
          <legend className="small">Scopes: what the producer may call (at least one)</legend>
          {tokenScopeNames.map((scope) => (
            <label key={scope} className="mono" style={{ display: 'inline-flex', alignItems: 'center', gap: 6, marginRight: 18, fontWeight: 400 }}>
              <input type="checkbox" name={`scope-${scope}`} /> {scope}
            </label>
          ))}
        </fieldset>
        <button type="submit" className="primary">
          Create token
        </button>
      </form>
      {list.isPending ? (
        <SkeletonLines lines={3} />
      ) : list.isError ? (
        <ErrorState error={list.error} retry={() => void list.refetch()} />
      ) : list.data.length === 0 ? (
        <EmptyState>No tokens yet. Create one per producing service so each can be revoked alone.</EmptyState>
      ) : (
        <div className="table-wrap">
          <table className="stack">
            <thead>
              <tr>
                <th>Name</th>
                <th>Token</th>
                <th>Scopes</th>
                <th>Expires</th>
                <th>Created</th>
                <th>Last used</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {list.data.map((token) => (
                <tr key={token.id} data-testid="token-row">
                  <td data-label="Name">{token.name}</td>
                  <td data-label="Token" className="mono">
                    nlk_{token.prefix}_…
                  </td>
                  <td data-label="Scopes" className="small mono">
                    {token.scopes.join(', ')}
                  </td>
                  <td data-label="Expires" className="small">
                    {token.expiresAt ? formatUtc(token.expiresAt) : 'never'}
                  </td>
                  <td data-label="Created" className="small">
                    {formatUtc(token.createdAt)}
                  </td>
                  <td data-label="Last used" className="small">
                    {formatUtc(token.lastUsedAt)}
                  </td>
                  <td>
                    {token.revokedAt ? (
                      <span className="badge bad">revoked {formatUtc(token.revokedAt).slice(0, 10)}</span>
                    ) : (
                      <button type="button" onClick={() => void revoke(token)}>
                        Revoke
                      </button>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
