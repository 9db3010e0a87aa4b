import { z } from 'zod';
import { roles } from '@/db/schema/states';
import { consoleContract } from '@/lib/http/contract';
import { instant, text } from '@/lib/api/fields';

export const usersQuery = z.object({ after: text().max(320).optional() });

const changeReason = text().trim().min(3).max(500);

export const createUserRequest = z.strictObject({
  email: z.email().max(320),
  name: text().trim().min(1).max(200),
  role: z.enum(roles),
  password: z.string().min(12, 'at least 12 characters').max(1024).optional(),
  reason: changeReason,
});

export const setRoleRequest = z.strictObject({ id: z.uuid(), role: z.enum(roles), reason: changeReason });

export const setDisabledRequest = z.strictObject({ id: z.uuid(), disabled: z.boolean(), reason: changeReason });

export const userView = z.object({
  id: z.uuid(),
  email: z.string(),
  name: z.string(),
  role: z.enum(roles),
  disabledAt: instant.nullable(),
  lockedUntil: instant.nullable(),
  failedLogins: z.number().int().nonnegative(),
  createdAt: instant,
  lastLoginAt: instant.nullable(),
});
export type UserView = z.infer<typeof userView>;

export const unlockUserRequest = z.strictObject({ id: z.uuid(), reason: changeReason });
export const resetPasswordRequest = z.strictObject({ id: z.uuid(), reason: changeReason });
export const passwordReset = z.object({ user: userView, password: z.string() });
export type PasswordReset = z.infer<typeof passwordReset>;

export const changePasswordRequest = z.strictObject({ currentPassword: z.string().min(1).max(1024), newPassword: z.string().min(1).max(1024) });
export const passwordChanged = z.object({ sessionsEnded: z.literal(true) });

export const usersPage = z.object({ rows: z.array(userView), next: z.string().nullable() });
export type UsersPage = z.infer<typeof usersPage>;

export const listUsersContract = consoleContract({
  method: 'GET',
  path: '/api/console/users',
  permission: 'users.manage',
  input: usersQuery,
  output: usersPage,
});
export const createUserContract = consoleContract({
  method: 'POST',
  path: '/api/console/users',
  permission: 'users.manage',
  input: createUserRequest,
  output: userView,
  status: 201,
});
export const setUserRoleContract = consoleContract({
  method: 'POST',
  path: '/api/console/users/role',
  permission: 'users.manage',
  input: setRoleRequest,
  output: userView,
});
export const setUserDisabledContract = consoleContract({
  method: 'POST',
  path: '/api/console/users/disable',
  permission: 'users.manage',
  input: setDisabledRequest,
  output: userView,
});
export const unlockUserContract = consoleContract({
  method: 'POST',
  path: '/api/console/users/unlock',
  permission: 'users.manage',
  input: unlockUserRequest,
  output: userView,
});
export const resetUserPasswordContract = consoleContract({
  method: 'POST',
  path: '/api/console/users/password-reset',
  permission: 'users.manage',
  input: resetPasswordRequest,
  output: passwordReset,
});
/** Any signed-in user, for their own password. */
export const changePasswordContract = consoleContract({
  method: 'POST',
  path: '/api/console/account/password',
  permission: 'account.password',
  input: changePasswordRequest,
  output: passwordChanged,
});

const oneTimeCode = z.string().trim().min(1, 'the code from your authenticator app, or a recovery code').max(64);
export const beginMfaRequest = z.strictObject({ currentPassword: z.string().min(1).max(1024) });
export const mfaEnrollment = z.object({ secret: z.string(), uri: z.string() });
export const confirmMfaRequest = z.strictObject({ code: oneTimeCode });
export const recoveryCodes = z.object({ recoveryCodes: z.array(z.string()) });
export const ownMfaChangeRequest = z.strictObject({ currentPassword: z.string().min(1).max(1024), code: oneTimeCode });
export const mfaDisabled = z.object({ disabled: z.literal(true) });
export const resetUserMfaRequest = z.strictObject({ id: z.uuid(), reason: changeReason });

/** Any signed-in user, for their own authenticator (lib/console/mfa.ts). */
export const beginMfaContract = consoleContract({
  method: 'POST',
  path: '/api/console/account/mfa/begin',
  permission: 'account.mfa',
  input: beginMfaRequest,
  output: mfaEnrollment,
});
export const confirmMfaContract = consoleContract({
  method: 'POST',
  path: '/api/console/account/mfa/confirm',
  permission: 'account.mfa',
  input: confirmMfaRequest,
  output: recoveryCodes,
});
export const regenerateRecoveryCodesContract = consoleContract({
  method: 'POST',
  path: '/api/console/account/mfa/recovery-codes',
  permission: 'account.mfa',
  input: ownMfaChangeRequest,
  output: recoveryCodes,
});
export const disableMfaContract = consoleContract({
  method: 'POST',
  path: '/api/console/account/mfa/disable',
  permission: 'account.mfa',
  input: ownMfaChangeRequest,
  output: mfaDisabled,
});
export const resetUserMfaContract = consoleContract({
  method: 'POST',
  path: '/api/console/users/mfa-reset',
  permission: 'users.manage',
  input: resetUserMfaRequest,
  output: userView,
});
