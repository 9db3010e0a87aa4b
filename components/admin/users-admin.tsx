'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { roleLabels, roles, type Role } from '@/lib/auth/roles';
import type { UserView } from '@/lib/console/users';
import { formatUtc } from '@/lib/console/format';
import { getJson, postJson } from '../query/api';
import { queryKeys } from '../query/keys';
import { EmptyState, ErrorState, SkeletonLines } from '../ui/states';

export function UsersAdmin({ selfId }: { selfId: string }) {
  const queryClient = useQueryClient();
  const list = useQuery({ queryKey: queryKeys.users(undefined), queryFn: () => getJson<{ rows: UserView[]; next: string | null }>('/api/console/users') });
  const [reason, setReason] = useState('');
  const [message, setMessage] = useState<{ tone: 'ok' | 'critical'; text: string } | null>(null);

  async function run(url: string, payload: Record<string, unknown>, success: string) {
    if (reason.trim().length < 3) {
      setMessage({ tone: 'critical', text: 'Write a reason first: every change goes to the audit log with it.' });
      return;
    }
    const result = await postJson<UserView>(url, { ...payload, reason: reason.trim() });
    setMessage(result.ok ? { tone: 'ok', text: success } : { tone: 'critical', text: result.error.message });
    if (result.ok) await queryClient.invalidateQueries({ queryKey: ['users'] });
  }

  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const password = String(form.get('password') ?? '');
    const email = String(form.get('email') ?? '');
    await run('/api/console/users', { email, name: String(form.get('name') ?? ''), role: String(form.get('role') ?? 'support'), ...(password ? { password } : {}) }, `Created ${email}.`);
  }

  return (
    <section className="card" data-testid="users-admin">
      <h2>Users</h2>
      <div className="field">
        <label htmlFor="admin-reason">Reason for the change (required, audited)</label>
        <input id="admin-reason" value={reason} onChange={(event) => setReason(event.target.value)} placeholder="e.g. new on-call rota starting Monday" style={{ width: '100%' }} />
      </div>
      {message ? (
        <div className={`banner ${message.tone}`} data-testid="admin-message">
          {message.text}
        </div>
      ) : null}
      <form className="row" onSubmit={create} style={{ marginBottom: 16 }} data-testid="create-user">
        <div>
          <label htmlFor="new-email">Email</label>
          <input id="new-email" name="email" type="email" required />
        </div>
        <div>
          <label htmlFor="new-name">Name</label>
          <input id="new-name" name="name" required />
        </div>
        <div>
          <label htmlFor="new-role">Role</label>
          <select id="new-role" name="role" defaultValue="support">
            {roles.map((role) => (
              <option key={role} value={role}>
                {roleLabels[role]}
              </option>
            ))}
          </select>
        </div>
        <div>
          <label htmlFor="new-password">Password (empty: single sign-on only)</label>
          <input id="new-password" name="password" type="password" minLength={12} autoComplete="new-password" />
        </div>
        <button type="submit" className="primary">
          Create user
        </button>
      </form>
      {list.isPending ? (
        <SkeletonLines lines={4} />
      ) : list.isError ? (
        <ErrorState error={list.error} retry={() => void list.refetch()} />
      ) : list.data.rows.length === 0 ? (
        <EmptyState>No users yet. Create the first one above.</EmptyState>
      ) : (
        <div className="table-wrap">
          <table>
            <thead>
              <tr>
                <th>User</th>
                <th>Role</th>
                <th className="hide-sm">Last sign-in</th>
                <th>Status</th>
                <th />
              </tr>
            </thead>
            <tbody>
              {list.data.rows.map((user) => (
                <tr key={user.id} data-testid="user-row" data-email={user.email}>
                  <td>
                    {user.name}
                    <span className="sub">{user.email}</span>
                  </td>
                  <td>
                    <select
                      aria-label={`Role of ${user.email}`}
                      value={user.role}
                      disabled={user.id === selfId}
                      onChange={(event) => {
                        const role = event.target.value as Role;
                        if (window.confirm(`Make ${user.email} ${roleLabels[role]}?`)) void run('/api/console/users/role', { id: user.id, role }, `${user.email} is now ${roleLabels[role]}.`);
                      }}
                    >
                      {roles.map((role) => (
                        <option key={role} value={role}>
                          {roleLabels[role]}
                        </option>
                      ))}
                    </select>
                  </td>
                  <td className="hide-sm small">{formatUtc(user.lastLoginAt)}</td>
                  <td>
                    {user.disabledAt ? <span className="badge bad">disabled</span> : user.lockedUntil && new Date(user.lockedUntil).getTime() > Date.now() ? <span className="badge warn">locked</span> : <span className="badge good">active</span>}
                  </td>
                  <td>
                    {user.id === selfId ? (
                      <span className="muted small">you</span>
                    ) : (
                      <button type="button" onClick={() => void run('/api/console/users/disable', { id: user.id, disabled: !user.disabledAt }, `${user.email} ${user.disabledAt ? 'enabled' : 'disabled'}.`)}>
                        {user.disabledAt ? 'Enable' : 'Disable'}
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
