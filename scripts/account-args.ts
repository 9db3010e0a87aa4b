import { parseArgs } from 'node:util';
import type { ZodType } from 'zod';
import { apiTokenScopes, type ApiTokenScope } from '@/db/schema/states';
import type { Role } from '@/lib/auth/roles';
import { createTokenRequest, revokeTokenRequest } from '@/lib/api/console/tokens';
import { createUserRequest } from '@/lib/api/console/users';

/**
 * `npm run ledger -- users …` and `… tokens …`: what a fresh deployment needs before anyone can
 * sign in. Each field is checked by the console's own request schema, so the CLI accepts what
 * the admin page accepts; a usage error is decided before a database connection opens.
 */

export const accountsUsage = `Usage:
  npm run ledger -- users create --email <email> --role <role> [--name <name>] [--generate-password] [--reason <text>]
      role: support, oncall, operator, manager or admin.
      On a terminal the password is asked twice and not echoed (at least 12 characters).
      With --generate-password, or when stdin is not a terminal, a strong password is
      generated and printed once; only its scrypt hash is stored.
  npm run ledger -- tokens create --name <name> --scopes <scope,…|all> [--expires <ISO instant>] [--reason <text>]
      A producer API token for /api/v1/…, printed once; only its SHA-256 is stored. Scopes:
      reminders:write, events:write, evidence:write, preferences:write, notices:read (or all).
  npm run ledger -- tokens list
  npm run ledger -- tokens revoke --id <token id> [--reason <text>]
  Every change is written to the audit log with the actor cli:<operating-system user>.
  Exit codes: 0 done, 1 refused (email taken, weak password, no such token), 2 usage.`;

export type AccountCommand =
  | { kind: 'users.create'; email: string; role: Role; name: string; generatePassword: boolean; reason: string }
  | { kind: 'tokens.create'; name: string; reason: string; scopes: ApiTokenScope[]; expiresAt: string | null }
  | { kind: 'tokens.list' }
  | { kind: 'tokens.revoke'; id: string; reason: string };

export type ParsedAccountArgs = { ok: true; command: AccountCommand } | { ok: false; error: string };

const fields = createUserRequest.shape;

function fail(error: string): ParsedAccountArgs {
  return { ok: false, error };
}

function check<T>(flag: string, value: unknown, schema: ZodType<T>): { ok: true; data: T } | { ok: false; error: string } {
  const parsed = schema.safeParse(value);
  if (parsed.success) return { ok: true, data: parsed.data };
  return { ok: false, error: `--${flag}: ${parsed.error.issues.map((issue) => issue.message).join('; ')}` };
}

function readFlags(
  argv: readonly string[],
  options: Record<string, { type: 'string' | 'boolean' }>,
): { ok: true; values: Record<string, string | boolean | undefined> } | { ok: false; error: string } {
  try {
    return { ok: true, values: parseArgs({ args: [...argv], strict: true, allowPositionals: false, options }).values };
  } catch (error) {
    return { ok: false, error: error instanceof Error ? error.message : String(error) };
  }
}

export function parseAccountArgs(argv: readonly string[]): ParsedAccountArgs {
  const [family, action, ...rest] = argv;
  const subject = `${family ?? ''} ${action ?? ''}`.trim();
  switch (subject) {
    case 'users create': {
      const flags = readFlags(rest, {
        email: { type: 'string' },
        role: { type: 'string' },
        name: { type: 'string' },
        'generate-password': { type: 'boolean' },
        reason: { type: 'string' },
      });
      if (!flags.ok) return fail(flags.error);
      const { values } = flags;
      if (values.email === undefined) return fail('users create needs --email');
      if (values.role === undefined) return fail('users create needs --role');
      const email = check('email', values.email, fields.email);
      if (!email.ok) return fail(email.error);
      const role = check('role', values.role, fields.role);
      if (!role.ok) return fail(role.error);
      const name = check('name', values.name ?? email.data.split('@')[0], fields.name);
      if (!name.ok) return fail(name.error);
      const reason = check('reason', values.reason ?? 'created with the ledger CLI', fields.reason);
      if (!reason.ok) return fail(reason.error);
      return {
        ok: true,
        command: {
          kind: 'users.create',
          email: email.data.toLowerCase(),
          role: role.data,
          name: name.data,
          generatePassword: values['generate-password'] === true,
          reason: reason.data,
        },
      };
    }
    case 'tokens create': {
      const flags = readFlags(rest, { name: { type: 'string' }, scopes: { type: 'string' }, expires: { type: 'string' }, reason: { type: 'string' } });
      if (!flags.ok) return fail(flags.error);
      if (flags.values.name === undefined) return fail('tokens create needs --name');
      if (typeof flags.values.scopes !== 'string') return fail(`tokens create needs --scopes (comma-separated: ${apiTokenScopes.join(', ')}; or all)`);
      const name = check('name', flags.values.name, createTokenRequest.shape.name);
      if (!name.ok) return fail(name.error);
      const listed = flags.values.scopes === 'all' ? [...apiTokenScopes] : flags.values.scopes.split(',').map((scope) => scope.trim());
      const scopes = check('scopes', listed, createTokenRequest.shape.scopes);
      if (!scopes.ok) return fail(scopes.error);
      const expires = check('expires', flags.values.expires ?? null, createTokenRequest.shape.expiresAt);
      if (!expires.ok) return fail(expires.error);
      const reason = check('reason', flags.values.reason ?? `created with the ledger CLI for ${name.data}`, createTokenRequest.shape.reason);
      if (!reason.ok) return fail(reason.error);
      return {
        ok: true,
        command: { kind: 'tokens.create', name: name.data, reason: reason.data, scopes: scopes.data, expiresAt: expires.data ?? null },
      };
    }
    case 'tokens list': {
      const flags = readFlags(rest, {});
      return flags.ok ? { ok: true, command: { kind: 'tokens.list' } } : fail(flags.error);
    }
    case 'tokens revoke': {
      const flags = readFlags(rest, { id: { type: 'string' }, reason: { type: 'string' } });
      if (!flags.ok) return fail(flags.error);
      if (flags.values.id === undefined) return fail('tokens revoke needs --id (see tokens list)');
      const id = check('id', flags.values.id, revokeTokenRequest.shape.id);
      if (!id.ok) return fail(id.error);
      const reason = check('reason', flags.values.reason ?? 'revoked with the ledger CLI', revokeTokenRequest.shape.reason);
      if (!reason.ok) return fail(reason.error);
      return { ok: true, command: { kind: 'tokens.revoke', id: id.data, reason: reason.data } };
    }
    default:
      return fail(action ? `unknown command "${subject}"` : `"${family ?? ''}" needs a subcommand`);
  }
}
