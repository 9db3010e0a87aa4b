import { randomBytes } from 'node:crypto';
import type { DbOrTx } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import { createUser, findUserById, listUsers, setUserDisabled, setUserPassword, setUserRole, unlockUser, type UserSummary } from '@/db/queries/users';
import type { PasswordReset, UserView, UsersPage } from '@/lib/api/console/users';
import { authenticate } from '@/lib/auth/credentials';
import { hashPassword } from '@/lib/auth/password';
import { newPasswordProblem } from '@/lib/auth/password-policy';
import type { Role } from '@/lib/auth/roles';
import { ok, refuse, type Result } from '@/lib/http/refusal';

export const USERS_PAGE_SIZE = 50;

export function view(user: UserSummary): UserView {
  return {
    ...user,
    disabledAt: user.disabledAt?.toISOString() ?? null,
    lockedUntil: user.lockedUntil?.toISOString() ?? null,
    createdAt: user.createdAt.toISOString(),
    lastLoginAt: user.lastLoginAt?.toISOString() ?? null,
  };
}

export async function loadUsersPage(db: DbOrTx, { after }: { after?: string }): Promise<UsersPage> {
  const rows = await listUsers(db, { after, limit: USERS_PAGE_SIZE + 1 });
  const page = rows.slice(0, USERS_PAGE_SIZE);
  return { rows: page.map(view), next: rows.length > USERS_PAGE_SIZE ? (page[page.length - 1]?.email ?? null) : null };
}

/** `actorId`: the console user creating this one (null from the CLI), kept as created_by for the four-eyes rule. */
export async function createConsoleUser(
  db: DbOrTx,
  params: { actor: string; actorId: string | null; email: string; name: string; role: Role; password?: string; reason: string },
): Promise<Result<UserView>> {
  const problem = params.password ? newPasswordProblem({ password: params.password, email: params.email }) : null;
  if (problem) return refuse('invalid_input', problem);
  const passwordHash = params.password ? await hashPassword(params.password) : null;
  return db.transaction(async (tx) => {
    const created = await createUser(tx, { email: params.email, name: params.name, role: params.role, passwordHash, createdBy: params.actorId });
    if (!created) return refuse('conflict', `A user with email ${params.email.toLowerCase()} already exists.`);
    await insertAuditEntries(tx, {
      entries: [
        {
          actor: params.actor,
          action: 'user.create',
          targetType: 'user',
          targetId: created.id,
          reason: params.reason,
          before: null,
          after: { email: created.email, role: created.role, password: passwordHash ? 'set' : 'none (single sign-on only)', createdBy: params.actorId },
        },
      ],
    });
    return ok(view(created));
  });
}

/** Admins cannot demote or disable themselves: the last admin locking everyone out is a ticket nobody can close. */
export async function changeUserRole(
  db: DbOrTx,
  params: { actorId: string; actor: string; id: string; role: Role; reason: string },
): Promise<Result<UserView>> {
  if (params.actorId === params.id) return refuse('conflict', 'You cannot change your own role; ask another admin.');
  return db.transaction(async (tx) => {
    const before = await findUserById(tx, { id: params.id });
    if (!before) return refuse('not_found', 'No such user.');
    const after = await setUserRole(tx, { id: params.id, role: params.role });
    if (!after) return refuse('not_found', 'No such user.');
    await insertAuditEntries(tx, {
      entries: [
        {
          actor: params.actor,
          action: 'user.role',
          targetType: 'user',
          targetId: params.id,
          reason: params.reason,
          before: { email: before.email, role: before.role },
          after: { email: after.email, role: after.role },
        },
      ],
    });
    return ok(view(after));
  });
}

export async function changeUserDisabled(
  db: DbOrTx,
  params: { actorId: string; actor: string; id: string; disabled: boolean; reason: string },
): Promise<Result<UserView>> {
  if (params.actorId === params.id) return refuse('conflict', 'You cannot disable your own account.');
  return db.transaction(async (tx) => {
    const before = await findUserById(tx, { id: params.id });
    if (!before) return refuse('not_found', 'No such user.');
    const after = await setUserDisabled(tx, { id: params.id, disabled: params.disabled });
    if (!after) return refuse('not_found', 'No such user.');
    await insertAuditEntries(tx, {
      entries: [
        {
          actor: params.actor,
          action: params.disabled ? 'user.disable' : 'user.enable',
          targetType: 'user',
          targetId: params.id,
          reason: params.reason,
          before: { email: before.email, disabled: before.disabledAt !== null },
          after: { email: after.email, disabled: after.disabledAt !== null },
        },
      ],
    });
    return ok(view(after));
  });
}

/** An admin lifts a lock (and the failure count behind it) before it runs out, with a reason. */
export async function unlockConsoleUser(db: DbOrTx, params: { actor: string; id: string; reason: string }): Promise<Result<UserView>> {
  return db.transaction(async (tx) => {
    const before = await findUserById(tx, { id: params.id });
    if (!before) return refuse('not_found', 'No such user.');
    const after = await unlockUser(tx, { id: params.id });
    if (!after) return refuse('not_found', 'No such user.');
    await insertAuditEntries(tx, {
      entries: [
        {
          actor: params.actor,
          action: 'user.unlock',
          targetType: 'user',
          targetId: params.id,
          reason: params.reason,
          before: { email: before.email, failedLogins: before.failedLogins, lockedUntil: before.lockedUntil?.toISOString() ?? null },
          after: { email: after.email, failedLogins: 0, lockedUntil: null },
        },
      ],
    });
    return ok(view(after));
  });
}

/** 24 base64url characters: 144 random bits, shown once to the admin and never stored in clear. */
function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}

/**
 * An admin sets a new, generated password for another user: every session of that user ends
 * and any lock is lifted. The password is in the answer only, never in the audit row.
 */
export async function resetUserPassword(db: DbOrTx, params: { actorId: string; actor: string; id: string; reason: string }): Promise<Result<PasswordReset>> {
  if (params.actorId === params.id) return refuse('conflict', 'Change your own password on the Account page; a reset is for someone else.');
  const target = await findUserById(db, { id: params.id });
  if (!target) return refuse('not_found', 'No such user.');
  const password = generatePassword();
  const passwordHash = await hashPassword(password);
  return db.transaction(async (tx) => {
    const after = await setUserPassword(tx, { id: params.id, passwordHash });
    if (!after) return refuse('not_found', 'No such user.');
    await insertAuditEntries(tx, {
      entries: [
        {
          actor: params.actor,
          action: 'user.password_reset',
          targetType: 'user',
          targetId: params.id,
          reason: params.reason,
          before: { email: target.email, password: target.passwordHash ? 'set' : 'none' },
          after: { email: after.email, password: 'reset', sessions: 'ended' },
        },
      ],
    });
    return ok({ user: view(after), password });
  });
}

/**
 * A user changes their own password: the current one is checked like a sign-in (counted
 * against the lockout, audited), the new one against the policy and the breached list. Every
 * session of the user ends, this one included; the form signs in again with the new password.
 */
export async function changeOwnPassword(
  db: DbOrTx,
  params: { userId: string; email: string; currentPassword: string; newPassword: string },
): Promise<Result<{ sessionsEnded: true }>> {
  const problem = newPasswordProblem({ password: params.newPassword, email: params.email });
  if (problem) return refuse('invalid_input', problem);
  if (params.newPassword === params.currentPassword) return refuse('invalid_input', 'The new password is the current one; choose another.');
  const current = await authenticate(db, { email: params.email, password: params.currentPassword, method: 'reauthenticate' });
  if (!current.ok || current.user.id !== params.userId) {
    return refuse('forbidden', 'The current password is not right (after several wrong ones the account locks for a few minutes).');
  }
  const before = await findUserById(db, { id: params.userId });
  if (!before?.passwordHash) return refuse('conflict', 'This account signs in with single sign-on only; it has no password to change.');
  const passwordHash = await hashPassword(params.newPassword);
  return db.transaction(async (tx) => {
    const after = await setUserPassword(tx, { id: params.userId, passwordHash, ifHash: before.passwordHash ?? undefined });
    if (!after) return refuse('conflict', 'The password changed meanwhile; sign in again and retry.');
    await insertAuditEntries(tx, {
      entries: [
        {
          actor: before.email,
          action: 'user.password_change',
          targetType: 'user',
          targetId: params.userId,
          reason: 'changed their own password',
          before: { password: 'set' },
          after: { password: 'changed', sessions: 'ended' },
        },
      ],
    });
    return ok({ sessionsEnded: true as const });
  });
}
