'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import { createUserContract, listUsersContract, setUserDisabledContract, setUserRoleContract, type UserView } from '@/lib/api/console/users';
import { isRole, roleLabels, roles } from '@/lib/auth/roles';
import { formatUtc } from '@/lib/console/format';
import { callConsole, consoleQuery, consoleQueryKey } from '@/lib/http/client';
import type { Result } from '@/lib/http/refusal';
import { EmptyState, ErrorState, SkeletonLines } from '@/components/ui/states';

export function UsersAdmin({ selfId }: { selfId: string }) {
  const queryClient = useQueryClient();
  const list = useQuery(consoleQuery(listUsersContract, {}));
  const [reason, setReason] = useState('');
  const [message, setMessage] = useState<{ tone: 'ok' | 'critical'; text: string } | null>(null);

  async function run(change: (reason: string) => Promise<Result<UserView>>, success: string) {
    if (reason.trim().length < 3) {
      setMessage({ tone: 'critical', text: 'Write a reason first: every change goes to the audit log with it.' });
      return;
    }
    const result = await change(reason.trim());
    setMessage(result.ok ? { tone: 'ok', text: success } : { tone: 'critical', text: result.refusal.message });
    if (result.ok) await queryClient.invalidateQueries({ queryKey: consoleQueryKey(listUsersContract, {}) });
  }

  async function create(event: FormEvent<HTMLFormElement>) {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const password = String(form.get('password') ?? '');
    const email = String(form.get('email') ?? '');
    const role = String(form.get('role') ?? 'support');
    if (!isRole(role)) return;
    await run(
      (why) => callConsole(createUserContract, { email, name: String(form.get('name') ?? ''), role, ...(password ? { password } : {}), reason: why }),
      `Created ${email}.`,
    );
  }

  return (
    <section className="card" data-testid="users-admin">
      <h2>Users</h2>
      <div className="field">
        <label htmlFor="admin-reason">Reason for the change (required, audited)</label>
        <input
          id="admin-reason"
          value={reason}
          onChange={(event) => setReason(event.target.value)}
          placeholder="e.g. new on-call rota starting Monday"
          style={{ width: '100%' }}
        />
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
                        const role = event.target.value;
                        if (isRole(role) && window.confirm(`Make ${user.email} ${roleLabels[role]}?`)) {
                          void run((why) => callConsole(setUserRoleContract, { id: user.id, role, reason: why }), `${user.email} is now ${roleLabels[role]}.`);
                        }
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
                    {user.disabledAt ? (
                      <span className="badge bad">disabled</span>
                    ) : user.lockedUntil && new Date(user.lockedUntil).getTime() > Date.now() ? (
                      <span className="badge warn">locked</span>
                    ) : (
                      <span className="badge good">active</span>
                    )}
                  </td>
                  <td>
                    {user.id === selfId ? (
                      <span className="muted small">you</span>
                    ) : (
                      <button
                        type="button"
                        onClick={() =>
                          void run(
                            (why) => callConsole(setUserDisabledContract, { id: user.id, disabled: !user.disabledAt, reason: why }),
                            `${user.email} ${user.disabledAt ? 'enabled' : 'disabled'}.`,
                          )
                        }
                      >
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
