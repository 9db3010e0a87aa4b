import { spawn } from 'node:child_process';
import { userInfo } from 'node:os';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { hashApiToken } from '@/lib/auth/api-tokens';
import { verifyPassword } from '@/lib/auth/password';
import { snapshotTables } from '@/test/fuzz/harness';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { collectRun, repoRoot, runScript, scriptEnv, tsxLoader, type ScriptRun } from '@/testing/run-script';

/**
 * `npm run ledger -- users …` / `tokens …` as a person runs them: the real script in a child
 * process against a real database, checked through the rows it wrote (or did not write).
 */

const expectedActor = `cli:${userInfo().username.toLowerCase()}`;
let t: TestDatabase;

beforeAll(async () => {
  t = await createTestDatabase();
});

afterAll(async () => {
  await t.drop();
});

function cliEnv(): NodeJS.ProcessEnv {
  return scriptEnv(t.url);
}

/** stdin is not a terminal here, as in a provisioning script. */
function runLedger(args: string[]): Promise<ScriptRun> {
  return runScript({ script: 'scripts/ledger-cli.ts', args, env: cliEnv() });
}

/**
 * On a terminal: util-linux `script` gives the CLI a pseudo-terminal. Each answer is typed only
 * after its prompt appeared, as a person would, so nothing reaches the terminal while it echoes.
 */
function runLedgerOnTerminal(args: string[], answers: string[]): Promise<ScriptRun> {
  const command = [process.execPath, '--import', tsxLoader, 'scripts/ledger-cli.ts', ...args].map((part) => `'${part}'`).join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], { cwd: repoRoot, env: cliEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
  let answered = 0;
  return collectRun(child, {
    onStdout: (stdout) => {
      const prompts = stdout.match(/Password[^:]*: /g)?.length ?? 0;
      while (answered < Math.min(prompts, answers.length)) {
        child.stdin.write(`${answers[answered] ?? ''}\r`);
        answered += 1;
      }
    },
  });
}

type AuditRow = { actor: string; target_id: string; reason: string; after: Record<string, unknown> | null; row: string };

async function auditRows(action: string): Promise<AuditRow[]> {
  const result = await t.pool.query<AuditRow>(
    `select actor, target_id, reason, after, row_to_json(audit_log)::text as row from audit_log where action = $1 order by id`,
    [action],
  );
  return result.rows;
}

describe('npm run ledger -- users create', () => {
  it('--generate-password creates the user, prints the password once, stores only its hash and audits as cli:<os user>', async () => {
    const run = await runLedger(['users', 'create', '--email', 'First.Admin@Example.com', '--role', 'admin', '--name', 'First Admin', '--generate-password']);
    expect(run.code, run.stderr).toBe(0);
    const password = /Password \(shown once[^)]*\): (\S+)/.exec(run.stdout)?.[1] ?? '';
    expect(password.length).toBeGreaterThanOrEqual(20);
    expect(run.stdout.split(password).length - 1).toBe(1);
    const user = await t.pool.query<{ id: string; email: string; role: string; name: string; password_hash: string }>(
      `select id, email, role, name, password_hash from users where email = 'first.admin@example.com'`,
    );
    const row = user.rows[0];
    expect(row).toMatchObject({ role: 'admin', name: 'First Admin' });
    expect(await verifyPassword(password, row?.password_hash ?? '')).toBe(true);
    const audit = await auditRows('user.create');
    expect(audit).toHaveLength(1);
    expect(audit[0]).toMatchObject({ actor: expectedActor, target_id: row?.id, reason: 'created with the ledger CLI' });
    expect(audit[0]?.after).toEqual({ email: 'first.admin@example.com', role: 'admin', password: 'set', createdBy: null });
    expect(audit[0]?.row).not.toContain(password);
    expect(audit[0]?.row).not.toContain(row?.password_hash ?? '');
  });

  it('without a terminal on stdin, generates the password even without the flag', async () => {
    const run = await runLedger(['users', 'create', '--email', 'support-lead@example.com', '--role', 'support']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/Created support support-lead@example.com .*\nPassword \(shown once/);
  });

  it.skipIf(process.platform !== 'linux')('on a terminal (linux: util-linux script), asks twice without echo and creates the user', async () => {
    const password = 'correct horse battery staple';
    const run = await runLedgerOnTerminal(['users', 'create', '--email', 'oncall-lead@example.com', '--role', 'oncall'], [password, password]);
    expect(run.code, run.stdout + run.stderr).toBe(0);
    expect(run.stdout).toContain('Password again: ');
    expect(run.stdout).not.toContain(password);
    expect(run.stdout).not.toContain('shown once');
    const user = await t.pool.query<{ password_hash: string }>(`select password_hash from users where email = 'oncall-lead@example.com'`);
    expect(await verifyPassword(password, user.rows[0]?.password_hash ?? '')).toBe(true);
  });

  it.skipIf(process.platform !== 'linux')('on a terminal, a weak password or two different ones exit 1 and change nothing', async () => {
    const before = await snapshotTables(t.pool);
    const weak = await runLedgerOnTerminal(['users', 'create', '--email', 'weak@example.com', '--role', 'admin'], ['short']);
    expect(weak.code, weak.stdout).toBe(1);
    expect(weak.stdout).toContain('at least 12 characters');
    const differ = await runLedgerOnTerminal(
      ['users', 'create', '--email', 'weak@example.com', '--role', 'admin'],
      ['a long enough password', 'another long password'],
    );
    expect(differ.code, differ.stdout).toBe(1);
    expect(differ.stdout).toContain('the two passwords differ');
    expect(await snapshotTables(t.pool)).toEqual(before);
  });

  it('refuses an existing email (exit 1), an invalid role or email and bad arguments (exit 2); nothing changes', async () => {
    await t.pool.query(`insert into users (email, name, role) values ('taken@example.com', 'Taken', 'support') on conflict do nothing`);
    const before = await snapshotTables(t.pool);
    const taken = await runLedger(['users', 'create', '--email', 'TAKEN@example.com', '--role', 'admin', '--generate-password']);
    expect(taken.code).toBe(1);
    expect(taken.stderr).toContain('already exists');
    expect(taken.stdout).not.toContain('Password');
    const usage = [
      ['users', 'create', '--email', 'new@example.com', '--role', 'root'],
      ['users', 'create', '--email', 'not-an-email', '--role', 'admin'],
      ['users', 'create', '--role', 'admin'],
      ['users', 'create', '--email', 'new@example.com', '--role', 'admin', '--password', 'on-the-command-line'],
      ['users', 'create', '--email', 'new@example.com', '--role', 'admin', 'extra'],
      ['users', 'delete', '--email', 'taken@example.com'],
      ['users'],
    ];
    for (const args of usage) {
      const run = await runLedger(args);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toContain('Usage:');
      expect(run.stderr).not.toMatch(/\n\s+at\s/);
    }
    expect(await snapshotTables(t.pool)).toEqual(before);
  });
});

describe('npm run ledger -- tokens …', () => {
  it('create prints the token once, stores its SHA-256 only, audits as cli:<os user>; list shows it; revoke revokes and audits', async () => {
    const expires = new Date(Date.now() + 30 * 86_400_000).toISOString();
    const created = await runLedger(['tokens', 'create', '--name', 'billing-service', '--scopes', 'reminders:write,notices:read', '--expires', expires]);
    expect(created.code, created.stderr).toBe(0);
    const lines = created.stdout.trim().split('\n');
    const token = lines[lines.length - 1] ?? '';
    expect(token).toMatch(/^nlk_[0-9a-f]{8}_[A-Za-z0-9_-]{43}$/);
    const stored = await t.pool.query<{ id: string; name: string; token_hash: string; created_by: string | null; scopes: string[]; expires_at: Date | null }>(
      `select id, name, token_hash, created_by, scopes, expires_at from api_tokens`,
    );
    expect(stored.rows).toEqual([
      {
        id: expect.any(String),
        name: 'billing-service',
        token_hash: hashApiToken(token),
        created_by: null,
        scopes: ['reminders:write', 'notices:read'],
        expires_at: new Date(expires),
      },
    ]);
    const id = stored.rows[0]?.id ?? '';
    const audit = await auditRows('api_token.create');
    expect(audit).toEqual([expect.objectContaining({ actor: expectedActor, target_id: id })]);
    expect(audit[0]?.row).not.toContain(token.slice(13));

    const listed = await runLedger(['tokens', 'list']);
    expect(listed.code).toBe(0);
    expect(listed.stdout).toContain(`${id}  ${token.slice(4, 12)}  billing-service`);
    expect(listed.stdout).not.toContain(token.slice(13));

    const revoked = await runLedger(['tokens', 'revoke', '--id', id, '--reason', 'rotated after the leak drill']);
    expect(revoked.code, revoked.stderr).toBe(0);
    const after = await t.pool.query<{ revoked_at: Date | null }>(`select revoked_at from api_tokens where id = $1`, [id]);
    expect(after.rows[0]?.revoked_at).toBeInstanceOf(Date);
    expect(await auditRows('api_token.revoke')).toEqual([
      expect.objectContaining({ actor: expectedActor, target_id: id, reason: 'rotated after the leak drill' }),
    ]);
  });

  it('refuses an unknown id (exit 1), a malformed id, a missing or empty name, missing or unknown scopes, a malformed expiry (exit 2); nothing changes', async () => {
    const before = await snapshotTables(t.pool);
    const unknown = await runLedger(['tokens', 'revoke', '--id', '00000000-0000-4000-8000-000000000000']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('No such token');
    for (const args of [
      ['tokens', 'revoke', '--id', '-'.repeat(36)],
      ['tokens', 'create'],
      ['tokens', 'create', '--name', '   ', '--scopes', 'all'],
      ['tokens', 'create', '--name', 'no-scopes'],
      ['tokens', 'create', '--name', 'bad-scope', '--scopes', 'reminders:write,admin'],
      ['tokens', 'create', '--name', 'bad-expiry', '--scopes', 'all', '--expires', 'tomorrow'],
      ['tokens', 'list', '--all'],
      ['tokens'],
    ]) {
      const run = await runLedger(args);
      expect(run.code, `${args.join(' ')}: ${run.stderr}`).toBe(2);
      expect(run.stderr).toContain('Usage:');
    }
    expect(await snapshotTables(t.pool)).toEqual(before);
  }, 90_000);

  it('--help prints the usage and exits 0 without a database', async () => {
    const run = await runLedger(['tokens', '--help']);
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('npm run ledger -- tokens create --name <name>');
    expect(run.stdout).toContain('npm run ledger -- users create --email <email> --role <role>');
  });
});
