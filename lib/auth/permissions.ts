import type { Role } from './roles';

/**
 * The one place that says which role may do what. Every route handler and page checks it
 * through `authorize` in lib/http/console-route.ts; proxy.ts only redirects anonymous visitors and never decides.
 * Roles are cumulative (support < oncall < operator < manager < admin), written out in full
 * so a reader sees each permission's holders without doing the arithmetic.
 */
export const permissions = {
  'overview.read': ['support', 'oncall', 'operator', 'manager', 'admin'],
  'lookup.read': ['support', 'oncall', 'operator', 'manager', 'admin'],
  /** A recipient's suppression and preferences, and cancelling one of their pending notices: support's daily work. */
  'recipients.manage': ['support', 'oncall', 'operator', 'manager', 'admin'],
  /** Lifting a suppression the provider reported (complaint, hard bounce): mail to that address may be refused or reported as spam again. */
  'recipients.unsuppress_reported': ['operator', 'manager', 'admin'],
  'quarantine.read': ['support', 'oncall', 'operator', 'manager', 'admin'],
  'quarantine.resolve': ['oncall', 'operator', 'manager', 'admin'],
  /** The Failures page: failed, retrying, deferred and missed notices. */
  'failures.read': ['support', 'oncall', 'operator', 'manager', 'admin'],
  /** Retry a failed notice whose window is open, one or in bulk (a large bulk retry waits for a manager's approval). */
  'failures.retry': ['oncall', 'operator', 'manager', 'admin'],
  'replay.read': ['support', 'oncall', 'operator', 'manager', 'admin'],
  'replay.request': ['operator', 'manager', 'admin'],
  'replay.approve': ['manager', 'admin'],
  'reports.read': ['manager', 'admin'],
  'windows.read': ['support', 'oncall', 'operator', 'manager', 'admin'],
  'gaps.resolve': ['operator', 'manager', 'admin'],
  /** The kill switch: pause or resume all sending, a notice type or a channel (with a reason, audited). */
  'controls.manage': ['operator', 'manager', 'admin'],
  /** The rollout: back to shadow, backfill, and asking to enforce (which a second person approves). */
  'rollout.manage': ['operator', 'manager', 'admin'],
  /** Approve or reject an operator's request to enforce (four-eyes: never one's own). */
  'rollout.approve': ['manager', 'admin'],
  'notice_config.read': ['operator', 'manager', 'admin'],
  /** Send a template's sample rendering to an address through the real mail transport (audited). */
  'templates.test': ['operator', 'manager', 'admin'],
  'audit.read': ['support', 'oncall', 'operator', 'manager', 'admin'],
  'users.manage': ['admin'],
  /** Change one's own password (the current one is asked again). */
  'account.password': ['support', 'oncall', 'operator', 'manager', 'admin'],
  /** One's own authenticator: enroll, regenerate recovery codes, disable (with password and code). */
  'account.mfa': ['support', 'oncall', 'operator', 'manager', 'admin'],
  'tokens.manage': ['admin'],
  /** The Webhooks page: endpoints, their failing state and the delivery log (never a secret). */
  'webhooks.read': ['operator', 'manager', 'admin'],
  /** Create, change, disable, rotate the secret of, test and replay to a webhook endpoint (audited): where the ledger's events go. */
  'webhooks.manage': ['admin'],
} as const satisfies Record<string, readonly Role[]>;

export type Permission = keyof typeof permissions;
export const permissionNames = Object.keys(permissions) as Permission[];

export function can(role: Role | null | undefined, permission: Permission): boolean {
  if (!role) return false;
  return (permissions[permission] as readonly Role[]).includes(role);
}

export function permissionsOf(role: Role): Permission[] {
  return permissionNames.filter((permission) => can(role, permission));
}
