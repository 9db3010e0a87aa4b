import { randomUUID } from 'node:crypto';
import { encode } from 'next-auth/jwt';
import type pg from 'pg';
import { expect } from 'vitest';
import type { Role } from '@/lib/auth/roles';
import { roles } from '@/lib/auth/roles';
export { snapshotTables } from './table-snapshot';

/** What every fuzzed request must satisfy, whatever it carried. */

export const FUZZ_SECRETS = {
  NEXTAUTH_SECRET: 'fuzz-nextauth-secret-7f3c9a1e5b2d4c6e8a0b1c2d3e4f5a6b',
  WEBHOOK_SECRET: 'fuzz-webhook-secret-0a9b8c7d6e5f4a3b2c1d0e9f8a7b6c5d',
  METRICS_TOKEN: 'fuzz-metrics-token-5e4d3c2b1a09',
  POSTMARK_WEBHOOK_PASSWORD: 'fuzz-postmark-password-31415926',
} as const;

type EnvPatch = Record<string, string | undefined>;

/** Sets env for route handlers (they read `config()` and `getDb()`); returns the undo. */
export function patchEnv(patch: EnvPatch): () => void {
  const saved = Object.fromEntries(Object.keys(patch).map((name) => [name, process.env[name]]));
  for (const [name, value] of Object.entries(patch)) {
    if (value === undefined) delete process.env[name];
    else process.env[name] = value;
  }
  return () => {
    for (const [name, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  };
}

const stackTracePattern = /\n\s+at\s|\bat\s+(?:async\s+)?[\w$.<>[\]]+\s+\((?:file:\/\/|\/|node:)|node_modules\/|\.ts:\d+:\d+/;

export type Outcome = { status: number; text: string; headers: Headers };

/**
 * Calls a handler as Next would and reads its answer. A thrown error is what Next turns into
 * a 500, so it fails the property with the error's name and message.
 */
export async function callHandler(handler: (request: Request) => Promise<Response>, request: Request): Promise<Outcome> {
  let response: Response;
  try {
    response = await handler(request);
  } catch (error) {
    const description = error instanceof Error ? `${error.name}: ${error.message.slice(0, 300)}` : String(error).slice(0, 300);
    throw new Error(`handler threw (a 500 in Next): ${description}`);
  }
  const text = await response.text();
  return { status: response.status, text, headers: response.headers };
}

/** No 5xx, no stack trace, none of the secrets (or one-time codes) anywhere in the body or headers. */
export function expectSafe(outcome: Outcome, { secrets, context }: { secrets: readonly string[]; context: string }): void {
  expect(outcome.status, `${context}: ${outcome.text.slice(0, 300)}`).toBeLessThan(500);
  expect(outcome.status, context).toBeGreaterThanOrEqual(200);
  expect(stackTracePattern.test(outcome.text), `${context}: stack trace in body ${outcome.text.slice(0, 300)}`).toBe(false);
  const headerText = [...outcome.headers.entries()].map(([name, value]) => `${name}: ${value}`).join('\n');
  for (const secret of secrets) {
    if (secret.length < 6) continue;
    expect(outcome.text.includes(secret), `${context}: a secret or one-time code is in the response body`).toBe(false);
    expect(headerText.includes(secret), `${context}: a secret or one-time code is in a response header`).toBe(false);
  }
}

/** One-time codes stored with claims: they must never reach a response. */
export async function storedOneTimeCodes(pool: pg.Pool): Promise<string[]> {
  const result = await pool.query<{ code: string }>(`select one_time_code as code from notice_ledger where one_time_code is not null`);
  return result.rows.map((row) => row.code);
}

export type SeededUser = { id: string; email: string; role: Role };

/** One active console user per role, plus a disabled admin. */
export async function seedConsoleUsers(pool: pg.Pool): Promise<{ byRole: Record<Role, SeededUser>; disabledAdmin: SeededUser }> {
  const byRole = {} as Record<Role, SeededUser>;
  for (const role of roles) {
    const email = `fuzz-${role}@example.com`;
    const result = await pool.query<{ id: string }>(`insert into users (email, name, role) values ($1, $2, $3) returning id`, [email, `Fuzz ${role}`, role]);
    const id = result.rows[0]?.id;
    if (!id) throw new Error('user insert returned nothing');
    byRole[role] = { id, email, role };
  }
  const disabled = await pool.query<{ id: string }>(
    `insert into users (email, name, role, disabled_at) values ('fuzz-disabled@example.com', 'Disabled', 'admin', now()) returning id`,
  );
  const disabledId = disabled.rows[0]?.id;
  if (!disabledId) throw new Error('user insert returned nothing');
  return { byRole, disabledAdmin: { id: disabledId, email: 'fuzz-disabled@example.com', role: 'admin' } };
}

/** The cookie next-auth would set after sign-in; a negative maxAge makes an expired one. */
export async function sessionCookie({
  userId,
  maxAgeSeconds = 3_600,
  secret = FUZZ_SECRETS.NEXTAUTH_SECRET,
}: {
  userId: string;
  maxAgeSeconds?: number;
  secret?: string;
}): Promise<string> {
  const token = await encode({ token: { sub: userId, name: 'fuzz', email: 'fuzz@example.com' }, secret, maxAge: maxAgeSeconds });
  return `next-auth.session-token=${token}`;
}

export function unknownUserId(): string {
  return randomUUID();
}
