import type { DbOrTx } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import { createUser, findUserById, listUsers, setUserDisabled, setUserRole, type UserSummary } from '@/db/queries/users';
import type { UserView, UsersPage } from '@/lib/api/console/users';
import { hashPassword } from '@/lib/auth/password';
import type { Role } from '@/lib/auth/roles';
import { ok, refuse, type Result } from '@/lib/http/refusal';

export type { UserView, UsersPage } from '@/lib/api/console/users';

export const USERS_PAGE_SIZE = 50;

function view(user: UserSummary): UserView {
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

export async function createConsoleUser(
  db: DbOrTx,
  params: { actor: string; email: string; name: string; role: Role; password?: string; reason: string },
): Promise<Result<UserView>> {
  const passwordHash = params.password ? await hashPassword(params.password) : null;
  return db.transaction(async (tx) => {
    const created = await createUser(tx, { email: params.email, name: params.name, role: params.role, passwordHash });
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
          after: { email: created.email, role: created.role, password: passwordHash ? 'set' : 'none (single sign-on only)' },
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
