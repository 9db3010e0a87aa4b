'use client';

import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type FormEvent } from 'react';
import {
  createUserContract,
  listUsersContract,
  resetUserPasswordContract,
  setUserDisabledContract,
  setUserRoleContract,
  resetUserMfaContract,
  unlockUserContract,
  type UserView,
} from '@/lib/api/console/users';
import { isRole, roleLabels, roles } from '@/lib/auth/roles';
import { formatUtc } from '@/lib/console/format';
import { callConsole, consoleQuery, consoleQueryKey } from '@/lib/http/client';
import type { Result } from '@/lib/http/refusal';
import { EmptyState, ErrorState, SkeletonLines } from '@/components/ui/states';

function isLocked(user: UserView): boolean {
  return user.lockedUntil !== null && new Date(user.lockedUntil).getTime() > Date.now();
}

export function UsersAdmin({ selfId }: { selfId: string }) {
  const queryClient = useQueryClient();
  const list = useQuery(consoleQuery(listUsersContract, {}));
  const [reason, setReason] = useState('');
  const [message, setMessage] = useState<{ tone: 'ok' | 'critical'; text: string } | null>(null);
  const [newPassword, setNewPassword] = useState<{ email: string; password: string } | null>(null);

  async function run<T>(change: (reason: string) => Promise<Result<T>>, success: string | ((data: T) => string)): Promise<T | null> {
    if (reason.trim().length < 3) {
      setMessage({ tone: 'critical', text: 'Write a reason first: every change goes to the audit log with it.' });
      return null;
    }
    setNewPassword(null);
    const result = await change(reason.trim());
    setMessage(
      result.ok ? { tone: 'ok', text: typeof success === 'string' ? success : success(result.data) } : { tone: 'critical', text: result.refusal.message },
    );
    if (!result.ok) return null;
    await queryClient.invalidateQueries({ queryKey: consoleQueryKey(listUsersContract, {}) });
    return result.data;
  }

  async function resetPassword(user: UserView) {
    if (!window.confirm(`Set a new password for ${user.email}? Their current password stops working and every session of theirs ends.`)) return;
    const reset = await run(
      (why) => callConsole(resetUserPasswordContract, { id: user.id, reason: why }),
      `New password set for ${user.email}; their sessions have ended.`,
    );
    if (reset) setNewPassword({ email: reset.user.email, password: reset.password });
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
      {newPassword ? (
        <div className="banner warning" data-testid="reset-password">
          New password for {newPassword.email}, shown once (only its hash is stored): <code style={{ whiteSpace: 'nowrap' }}>{newPassword.password}</code>. Hand
          it over in person or by a channel you trust; they can change it on their Account page.
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
                    ) : isLocked(user) ? (
                      <span className="badge warn" title={`after ${user.failedLogins} failed sign-ins`}>
                        locked until {formatUtc(user.lockedUntil)}
                      </span>
                    ) : (
                      <span className="badge good">active</span>
                    )}
                  </td>
                  <td>
                    {user.id === selfId ? (
                      <span className="muted small">you</span>
                    ) : (
                      <div className="actions">
                        {isLocked(user) || user.failedLogins > 0 ? (
                          <button
                            type="button"
                            data-testid="unlock-user"
                            onClick={() =>
                              void run(
                                (why) => callConsole(unlockUserContract, { id: user.id, reason: why }),
                                `${user.email} is unlocked; their failed sign-ins are cleared.`,
                              )
                            }
                          >
                            Unlock
                          </button>
                        ) : null}
                        {user.disabledAt ? null : (
                          <button type="button" data-testid="reset-user-password" onClick={() => void resetPassword(user)}>
                            Reset password
                          </button>
                        )}
                        {user.disabledAt ? null : (
                          <button
                            type="button"
                            data-testid="reset-user-mfa"
                            onClick={() =>
                              void run(
                                (why) => callConsole(resetUserMfaContract, { id: user.id, reason: why }),
                                `${user.email}'s authenticator is removed and their sessions ended; they sign in with the password and set up a new one.`,
                              )
                            }
                          >
                            Reset authenticator
                          </button>
                        )}
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
                      </div>
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
