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
    // Issue 30: operators hold the kill switch (controls.manage) and the rollout (rollout.manage: shadow, backfill, asking to enforce);
    // a manager approves enforcing (rollout.approve, four-eyes).
    // Issue 23: on-call retries a failed notice whose window is open (a large bulk retry still waits for a manager).
    expect(permissionsOf('oncall').filter((p) => !can('support', p))).toEqual(['quarantine.resolve', 'failures.retry']);
    expect(
      permissionsOf('operator')
        .filter((p) => !can('oncall', p))
        .sort(),
    ).toEqual([
      'controls.manage',
      'gaps.resolve',
      'notice_config.read',
      'recipients.unsuppress_reported',
      'replay.request',
      'rollout.manage',
      'templates.test',
      'webhooks.read',
    ]);
    expect(
      permissionsOf('manager')
        .filter((p) => !can('operator', p))
        .sort(),
    ).toEqual(['replay.approve', 'reports.read', 'rollout.approve']);
    expect(
      permissionsOf('admin')
        .filter((p) => !can('manager', p))
        .sort(),
      // Issue 26: admins manage webhook endpoints (where the ledger's events go); operators read the delivery log.
    ).toEqual(['tokens.manage', 'users.manage', 'webhooks.manage']);
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
      'webhooks.manage',
      'webhooks.read',
    ] as const)
      expect(can('support', permission)).toBe(false);
  });
});
