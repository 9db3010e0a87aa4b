import type { Db } from '@/db/client';
import { findUserByEmail } from '@/db/queries/users';
import { authenticate } from '@/lib/auth/credentials';
import { enabledMfaOf, roleNeedsMfa } from '@/lib/auth/mfa';
import { config } from '@/lib/config';
import type { Actor } from '@/lib/replay/transitions';
import { promptHidden, Refused } from './ledger-accounts';

/** The first two lines of a piped stdin (`printf '%s\n%s\n' "$PASSWORD" "$CODE" | npm run ledger -- …`): password and authentication code. */
async function readPipedLines(): Promise<[string, string]> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of process.stdin) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    chunks.push(buffer);
    length += buffer.length;
    // A password is at most 1024 characters; anything longer is not one.
    if (length > 8_192) break;
  }
  const [password = '', code = ''] = Buffer.concat(chunks).toString('utf8').split(/\r?\n/, 2);
  return [password.slice(0, 8_192), code.trim().slice(0, 64)];
}

/**
 * The CLI acts in a console user's name only with that user's password and, when they set up an
 * authenticator, a current code or recovery code: typed at hidden prompts on a terminal, or the
 * first and second lines of stdin in a pipeline. It is checked like a console
 * sign-in (`authenticate`, method `cli`): counted towards the lockout, audited, never stored or
 * echoed. No password, a wrong one, or a locked, disabled or unknown account: refused, nothing
 * changed, with the same message for each.
 */
export async function verifiedActor(db: Db, email: string): Promise<Actor> {
  const [password, pipedCode] = process.stdin.isTTY
    ? [await promptHidden(`Password of ${email} (acting in their name): `, 'cancelled; nothing was changed'), '']
    : await readPipedLines();
  if (!password) {
    throw new Refused(`acting as ${email} needs that user's password: type it at the prompt, or pipe it on stdin; nothing was changed`);
  }
  const code =
    process.stdin.isTTY && (await hasEnabledMfa(db, email))
      ? await promptHidden(`Authentication code of ${email}: `, 'cancelled; nothing was changed')
      : pipedCode;
  const result = await authenticate(db, { email, password, code, method: 'cli' });
  if (!result.ok) {
    throw new Refused(
      `the password (or, with an authenticator set up, the code on the next line) for ${email} is not right, or the account is locked or disabled; nothing was changed (a locked account can be unlocked by an admin)`,
    );
  }
  // As in the console (lib/auth/mfa.ts): a role that needs MFA acts only once it is set up.
  if (roleNeedsMfa(result.user.role, config().MFA_REQUIRED_ROLES) && !(await enabledMfaOf(db, result.user.id))) {
    throw new Refused(
      `${email} is a ${result.user.role}, who must sign in with an authenticator app: set one up on the console's Account page first; nothing was changed`,
    );
  }
  return { id: result.user.id, email: result.user.email, role: result.user.role };
}

/** Whether to prompt for a code on a terminal; the check itself is authenticate's. */
async function hasEnabledMfa(db: Db, email: string): Promise<boolean> {
  const user = await findUserByEmail(db, { email: email.trim().toLowerCase() });
  return user !== null && (await enabledMfaOf(db, user.id)) !== null;
}
