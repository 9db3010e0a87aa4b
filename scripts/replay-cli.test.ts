import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '@/db/queries/users';
import { hashPassword } from '@/lib/auth/password';
import { totpCodeAt } from '@/lib/auth/totp';
import { enrollTestMfa } from '@/testing/mfa';
import { insertTestJob } from '@/testing/jobs';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { runScript, type ScriptRun } from '@/testing/run-script';
import { parseReplayArgs } from './replay-args';

function runCli(args: string[], env: Record<string, string>, stdin = ''): Promise<ScriptRun> {
  return runScript({ script: 'scripts/ledger-cli.ts', args, env: { ...process.env, ...env, LOG_LEVEL: 'silent' }, stdin });
}

describe('parseReplayArgs', () => {
  const id = '6f1d2c3b-1111-4222-8333-944455556666';
  it('defaults to a dry run and builds each command', () => {
    expect(parseReplayArgs(['replay', '--source', 'billing'])).toEqual({
      ok: true,
      command: {
        kind: 'dry-run',
        filter: { source: 'billing', dueFrom: undefined, dueTo: undefined, noticeType: undefined },
        csvPath: null,
        as: null,
        reason: null,
      },
    });
    expect(parseReplayArgs(['replay', '--csv', 'x.csv', '--request', '--as', 'o@x', '--reason', 'r'])).toMatchObject({
      ok: true,
      command: { kind: 'request', csvPath: 'x.csv', filter: null },
    });
    expect(parseReplayArgs(['replay', '--approve', id, '--as', 'm@x', '--reason', 'ok'])).toEqual({
      ok: true,
      command: { kind: 'approve', id, as: 'm@x', reason: 'ok' },
    });
    expect(parseReplayArgs(['replay', '--run', id, '--as', 'o@x'])).toMatchObject({ ok: true, command: { kind: 'run', id } });
    expect(parseReplayArgs(['replay', '--list'])).toEqual({ ok: true, command: { kind: 'list' } });
  });

  it('explains every usage error', () => {
    const error = (argv: string[]) => {
      const parsed = parseReplayArgs(argv);
      return parsed.ok ? null : parsed.error;
    };
    expect(error([])).toBe('missing command');
    expect(error(['backfill'])).toBe('unknown command "backfill"');
    expect(error(['replay'])).toMatch(/give a filter/);
    expect(error(['replay', '--bogus'])).toMatch(/bogus/);
    expect(error(['replay', '--approve', 'nope', '--as', 'm@x', '--reason', 'r'])).toMatch(/needs a replay id/);
    expect(error(['replay', '--approve', id, '--reason', 'r'])).toBe('--approve needs --as <email>');
    expect(error(['replay', '--approve', id, '--as', 'm@x'])).toBe('--approve needs --reason <text>');
    expect(error(['replay', '--approve', id, '--run', id, '--as', 'm@x'])).toMatch(/choose one of/);
    expect(error(['replay', '--from', 'yesterday'])).toMatch(/ISO time/);
    expect(error(['replay', '--from', '2026-11-02T00:00:00Z', '--to', '2026-11-01T00:00:00Z'])).toBe('--from must be before --to');
    expect(error(['replay', '--type', 'sms'])).toBe(
      '--type must be one of renewal_notice_t72, renewal_notice_t24, payment_recovery, auto_renewal_notice, trial_conversion_notice, price_change_notice, pre_debit_notice, billing_reminder',
    );
    expect(error(['replay', '--type', 'price_change_notice'])).toBeNull();
    expect(error(['replay', '--csv', 'a.csv', '--source', 'x'])).toMatch(/cannot be combined/);
    expect(error(['replay', '--source', 'x', '--request', '--as', 'o@x'])).toBe('--request needs --reason <text>');
  });
});

describe('ledger CLI process', () => {
  let t: TestDatabase;
  let env: Record<string, string>;
  const operatorEmail = `op-${randomBytes(3).toString('hex')}@cli.test`;
  const operatorPassword = 'operator-cli-password-1';
  const managerPassword = 'manager-cli-password-1';
  const typed = (password: string) => `${password}\n`;

  async function counts() {
    const result = await t.pool.query<{ replays: number; audits: number }>(
      'select (select count(*) from replays)::int as replays, (select count(*) from audit_log)::int as audits',
    );
    return result.rows[0];
  }

  beforeAll(async () => {
    t = await createTestDatabase();
    env = { DATABASE_URL: t.url };
    await createUser(t.db, { email: operatorEmail, name: 'op', role: 'operator', passwordHash: await hashPassword(operatorPassword) });
    for (let i = 0; i < 3; i += 1) await insertTestJob(t.db, { source: 'cli-src' });
  });

  afterAll(async () => {
    await t?.drop();
  });

  it('a usage error exits 2 with the usage text and changes nothing', async () => {
    const before = await counts();
    const result = await runCli(['replay', '--approve', 'not-a-uuid', '--as', operatorEmail, '--reason', 'x'], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/needs a replay id[\s\S]*Usage:/);
    expect(await counts()).toEqual(before);
  });

  it('dry-runs by default, then requests; the requester cannot approve their own (exit 1)', async () => {
    const before = await counts();
    const dry = await runCli(['replay', '--source', 'cli-src'], env);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/keys: 3 {2}new: 3/);
    expect(dry.stdout).toMatch(/nothing was changed/);
    expect(await counts()).toEqual(before);

    const requested = await runCli(
      ['replay', '--source', 'cli-src', '--request', '--as', operatorEmail, '--reason', 'lost wake-ups'],
      env,
      typed(operatorPassword),
    );
    expect(requested.code).toBe(0);
    const id = /Requested replay ([0-9a-f-]{36})/.exec(requested.stdout)?.[1] ?? '';
    expect(id).not.toBe('');
    const refused = await runCli(['replay', '--approve', id, '--as', operatorEmail, '--reason', 'mine'], env, typed(operatorPassword));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/Four-eyes rule: you requested this replay/);
    const state = await t.pool.query<{ state: string }>('select state from replays where id = $1', [id]);
    expect(state.rows[0]?.state).toBe('requested');
  });

  it("approving in a manager's name needs that manager's password and code: none or a wrong one is refused (exit 1) and changes nothing", async () => {
    const managerEmail = `mgr-${randomBytes(3).toString('hex')}@cli.test`;
    const manager = await createUser(t.db, { email: managerEmail, name: 'mgr', role: 'manager', passwordHash: await hashPassword(managerPassword) });
    const { secret } = await enrollTestMfa(t.db, { userId: manager?.id ?? '' });
    const requested = await runCli(
      ['replay', '--source', 'cli-src', '--request', '--as', operatorEmail, '--reason', 'lost wake-ups'],
      env,
      typed(operatorPassword),
    );
    const id = /Requested replay ([0-9a-f-]{36})/.exec(requested.stdout)?.[1] ?? '';
    const state = async () => (await t.pool.query<{ state: string }>('select state from replays where id = $1', [id])).rows[0]?.state;
    const before = await counts();
    const withoutPassword = await runCli(['replay', '--approve', id, '--as', managerEmail, '--reason', 'checked'], env);
    expect(withoutPassword.code).toBe(1);
    expect(withoutPassword.stderr).toMatch(/needs that user's password.*nothing was changed/);
    expect(await counts()).toEqual(before);
    const wrongPassword = await runCli(['replay', '--approve', id, '--as', managerEmail, '--reason', 'checked'], env, typed('not-the-managers-password'));
    expect(wrongPassword.code).toBe(1);
    expect(wrongPassword.stderr).toMatch(/not right.*nothing was changed/);
    expect(await state()).toBe('requested');
    // The wrong guess was a failed sign-in: audited as such, and counted towards the lockout.
    const audited = await t.pool.query<{ action: string; after: { method: string } }>(
      `select action, after from audit_log where actor = $1 and action like 'sign_in.%' order by id`,
      [managerEmail],
    );
    expect(audited.rows).toEqual([{ action: 'sign_in.failure', after: expect.objectContaining({ method: 'cli', failedLogins: 1 }) }]);
    // The right password without the authenticator's code: refused, counted like a wrong password.
    const withoutCode = await runCli(['replay', '--approve', id, '--as', managerEmail, '--reason', 'checked'], env, typed(managerPassword));
    expect(withoutCode.code).toBe(1);
    expect(withoutCode.stderr).toMatch(/not right.*nothing was changed/);
    const wrongCode = await runCli(['replay', '--approve', id, '--as', managerEmail, '--reason', 'checked'], env, `${managerPassword}\n000000\n`);
    expect(wrongCode.code).toBe(1);
    expect(await state()).toBe('requested');
    const refusedAudits = await t.pool.query<{ reason: string }>(`select reason from audit_log where actor = $1 and action = 'sign_in.failure' order by id`, [
      managerEmail,
    ]);
    expect(refusedAudits.rows.map((row) => row.reason)).toEqual([
      'wrong password',
      'no authentication code (MFA enrolled)',
      'wrong or already used authentication code',
    ]);
    // Control: with the manager's own password and current code the approval goes through.
    const approved = await runCli(
      ['replay', '--approve', id, '--as', managerEmail, '--reason', 'checked'],
      env,
      `${managerPassword}\n${totpCodeAt({ secret, now: new Date() })}\n`,
    );
    expect(approved.code, approved.stderr).toBe(0);
    expect(await state()).toBe('approved');
    // Seven CLI processes, each a few seconds on a loaded machine.
  }, 90_000);

  it('a manager without an authenticator cannot approve from the CLI, even with the right password, until they set one up', async () => {
    const managerEmail = `mgr-${randomBytes(3).toString('hex')}@cli.test`;
    const manager = await createUser(t.db, { email: managerEmail, name: 'mgr', role: 'manager', passwordHash: await hashPassword(managerPassword) });
    const requested = await runCli(
      ['replay', '--source', 'cli-src', '--request', '--as', operatorEmail, '--reason', 'lost wake-ups'],
      env,
      typed(operatorPassword),
    );
    const id = /Requested replay ([0-9a-f-]{36})/.exec(requested.stdout)?.[1] ?? '';
    const refused = await runCli(['replay', '--approve', id, '--as', managerEmail, '--reason', 'checked'], env, typed(managerPassword));
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/must sign in with an authenticator app.*nothing was changed/);
    const state = async () => (await t.pool.query<{ state: string }>('select state from replays where id = $1', [id])).rows[0]?.state;
    expect(await state()).toBe('requested');
    const { recoveryCodes } = await enrollTestMfa(t.db, { userId: manager?.id ?? '' });
    const approved = await runCli(['replay', '--approve', id, '--as', managerEmail, '--reason', 'checked'], env, `${managerPassword}\n${recoveryCodes[0]}\n`);
    expect(approved.code, approved.stderr).toBe(0);
    expect(await state()).toBe('approved');
  });

  it('--run only moves an approved replay to running and returns; the workers publish it', async () => {
    const managerEmail = `mgr-${randomBytes(3).toString('hex')}@cli.test`;
    const manager = await createUser(t.db, { email: managerEmail, name: 'mgr', role: 'manager', passwordHash: await hashPassword(managerPassword) });
    const { recoveryCodes } = await enrollTestMfa(t.db, { userId: manager?.id ?? '' });
    const requested = await runCli(
      ['replay', '--source', 'cli-src', '--request', '--as', operatorEmail, '--reason', 'lost wake-ups'],
      env,
      typed(operatorPassword),
    );
    const id = /Requested replay ([0-9a-f-]{36})/.exec(requested.stdout)?.[1] ?? '';
    expect(
      (await runCli(['replay', '--approve', id, '--as', managerEmail, '--reason', 'checked'], env, `${managerPassword}\n${recoveryCodes[0]}\n`)).code,
    ).toBe(0);
    const run = await runCli(['replay', '--run', id, '--as', operatorEmail], env, typed(operatorPassword));
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/is running .*the workers publish it/);
    const row = await t.pool.query<{ state: string; total: number; published: number }>('select state, total, published from replays where id = $1', [id]);
    expect(row.rows[0]).toEqual({ state: 'running', total: 3, published: 0 });
  });
});
