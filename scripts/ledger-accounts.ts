import { randomBytes } from 'node:crypto';
import { userInfo } from 'node:os';
import type { Db } from '@/db/client';
import type { AccountCommand } from './account-args';
import { createUserRequest } from '@/lib/api/console/users';
import { createConsoleToken, loadTokens, revokeConsoleToken } from '@/lib/console/tokens';
import { createConsoleUser } from '@/lib/console/users';

/**
 * `npm run ledger -- users …` / `tokens …` through the console's own service functions, so
 * the same checks and audit rows apply. The clear password or token is printed once to
 * stdout and goes nowhere else: not into an argument, the audit log or a log line.
 */

export class Refused extends Error {}

/**
 * The audit actor of a terminal: there is no console session, so the row names the
 * operating-system account that ran the command (lower-cased, as the audit filter compares).
 */
export function cliActor(): string {
  let name: string;
  try {
    name = userInfo().username;
  } catch {
    name = process.env.USER ?? process.env.LOGNAME ?? 'unknown';
  }
  return `cli:${name.toLowerCase()}`;
}

/** 24 base64url characters: 144 random bits, far past the console's 12-character minimum. */
function generatePassword(): string {
  return randomBytes(18).toString('base64url');
}

/** Reads one line from the terminal without echoing it. */
export function promptHidden(question: string, cancelled = 'cancelled; nothing was created'): Promise<string> {
  const { stdin, stderr } = process;
  // Echo off before the prompt shows: an answer typed the moment it appears is not echoed.
  stdin.setRawMode(true);
  stdin.setEncoding('utf8');
  stdin.resume();
  stderr.write(question);
  return new Promise((resolve, reject) => {
    let answer = '';
    const finish = (outcome: () => void) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      stderr.write('\n');
      outcome();
    };
    const onData = (chunk: string) => {
      for (const char of chunk) {
        if (char === '\r' || char === '\n' || char === '\u0004') return finish(() => resolve(answer));
        if (char === '\u0003') return finish(() => reject(new Refused(cancelled)));
        answer = char === '\u007f' || char === '\b' ? answer.slice(0, -1) : answer + char;
      }
    };
    stdin.on('data', onData);
  });
}

async function choosePassword(generate: boolean): Promise<{ password: string; generated: boolean }> {
  if (generate || !process.stdin.isTTY) return { password: generatePassword(), generated: true };
  const password = await promptHidden('Password (at least 12 characters): ');
  const weak = createUserRequest.shape.password.safeParse(password);
  if (!weak.success) throw new Refused(`password: ${weak.error.issues.map((issue) => issue.message).join('; ')}; nothing was created`);
  if ((await promptHidden('Password again: ')) !== password) throw new Refused('the two passwords differ; nothing was created');
  return { password, generated: false };
}

export async function executeAccountCommand(db: Db, command: AccountCommand): Promise<void> {
  const actor = cliActor();
  switch (command.kind) {
    case 'users.create': {
      const { password, generated } = await choosePassword(command.generatePassword);
      const request = createUserRequest.safeParse({ email: command.email, name: command.name, role: command.role, password, reason: command.reason });
      if (!request.success) throw new Refused(request.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; '));
      const result = await createConsoleUser(db, { ...request.data, actor, actorId: null });
      if (!result.ok) throw new Refused(result.refusal.message);
      console.log(`Created ${result.data.role} ${result.data.email} (user ${result.data.id}); audited as ${actor}.`);
      if (generated) console.log(`Password (shown once, not stored in clear; keep it now): ${password}`);
      return;
    }
    case 'tokens.create': {
      const created = await createConsoleToken(db, {
        name: command.name,
        reason: command.reason,
        actor,
        actorId: null,
        scopes: command.scopes,
        expiresAt: command.expiresAt,
      });
      if (!created.ok) throw new Refused(created.refusal.message);
      const { token, summary } = created.data;
      const expiry = summary.expiresAt ? `expires ${summary.expiresAt}` : 'does not expire';
      console.log(
        `Created API token ${summary.prefix} "${summary.name}" (id ${summary.id}; scopes ${summary.scopes.join(', ')}; ${expiry}); audited as ${actor}.`,
      );
      console.log('Token (shown once; only its SHA-256 is stored):');
      console.log(token);
      return;
    }
    case 'tokens.list': {
      const tokens = await loadTokens(db);
      if (tokens.length === 0) console.log('No API tokens.');
      for (const token of tokens) {
        const state = token.revokedAt ? `revoked ${token.revokedAt}` : `last used ${token.lastUsedAt ?? 'never'}`;
        const expiry = token.expiresAt ? `  expires ${token.expiresAt}` : '';
        console.log(`${token.id}  ${token.prefix}  ${token.name}  ${token.scopes.join(',')}  created ${token.createdAt}${expiry}  ${state}`);
      }
      return;
    }
    case 'tokens.revoke': {
      const result = await revokeConsoleToken(db, { id: command.id, reason: command.reason, actor });
      if (!result.ok) throw new Refused(result.refusal.message);
      console.log(`Revoked API token ${result.data.prefix} "${result.data.name}" at ${result.data.revokedAt ?? ''}; audited as ${actor}.`);
      return;
    }
  }
}
