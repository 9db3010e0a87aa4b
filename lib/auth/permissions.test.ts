import { describe, expect, it } from 'vitest';
import { can, permissionNames, permissions, permissionsOf } from './permissions';
import { roles } from './roles';

describe('permission map', () => {
  it('gives each role exactly what DESIGN.md says, with the recipient issue (16) on top', () => {
    // DESIGN.md's support is read-only; issue 16 gives support the recipient's suppressions and
    // preferences (audited, with a reason), and operators the template test send; issue 24 keeps
    // lifting a complaint or hard bounce to operators, and gives everyone their own password change
    // and authenticator.
    expect(permissionsOf('support').sort()).toEqual([
      'account.mfa',
      'account.password',
      'audit.read',
      'failures.read',
      'lookup.read',
      'overview.read',
      'quarantine.read',
      'recipients.manage',
      'replay.read',
      'windows.read',
    ]);
    // Issue 23: on-call retries a failed notice whose window is open (a large bulk retry still waits for a manager).
    expect(permissionsOf('oncall').filter((p) => !can('support', p))).toEqual(['quarantine.resolve', 'failures.retry']);
    expect(
      permissionsOf('operator')
        .filter((p) => !can('oncall', p))
        .sort(),
    ).toEqual(['gaps.resolve', 'notice_config.read', 'recipients.unsuppress_reported', 'replay.request', 'templates.test']);
    expect(
      permissionsOf('manager')
        .filter((p) => !can('operator', p))
        .sort(),
    ).toEqual(['replay.approve', 'reports.read']);
    expect(
      permissionsOf('admin')
        .filter((p) => !can('manager', p))
        .sort(),
    ).toEqual(['tokens.manage', 'users.manage']);
  });

  it('is cumulative: every role holds everything the role below it holds', () => {
    for (let index = 1; index < roles.length; index += 1) {
      const lower = roles[index - 1];
      const higher = roles[index];
      if (!lower || !higher) throw new Error('roles list has holes');
      for (const permission of permissionsOf(lower)) expect(can(higher, permission), `${higher} lacks ${permission}`).toBe(true);
    }
  });

  it('lists only known roles, without repeats', () => {
    for (const name of permissionNames) {
      const holders: readonly string[] = permissions[name];
      expect(new Set(holders).size).toBe(holders.length);
      for (const holder of holders) expect(roles).toContain(holder);
    }
  });

  it('refuses nobody-signed-in and unknown roles', () => {
    expect(can(null, 'overview.read')).toBe(false);
    expect(can(undefined, 'audit.read')).toBe(false);
  });

  it('keeps mutations away from support', () => {
    for (const permission of [
      'quarantine.resolve',
      'failures.retry',
      'gaps.resolve',
      'replay.request',
      'replay.approve',
      'users.manage',
      'tokens.manage',
    ] as const)
      expect(can('support', permission)).toBe(false);
  });
});
