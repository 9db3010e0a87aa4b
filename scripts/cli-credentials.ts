import type { Db } from '@/db/client';
import { authenticate } from '@/lib/auth/credentials';
import type { Actor } from '@/lib/replay/transitions';
import { promptHidden, Refused } from './ledger-accounts';

/** The first line of a piped stdin (`printf '%s\n' "$PASSWORD" | npm run ledger -- …`); empty when stdin is closed or empty. */
async function readPipedLine(): Promise<string> {
  const chunks: Buffer[] = [];
  let length = 0;
  for await (const chunk of process.stdin) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    chunks.push(buffer);
    length += buffer.length;
    // A password is at most 1024 characters; anything longer is not one.
    if (length > 8_192) break;
  }
  return (Buffer.concat(chunks).toString('utf8').split(/\r?\n/, 1)[0] ?? '').slice(0, 8_192);
}

/**
 * The CLI acts in a console user's name only with that user's password: typed at a hidden
 * prompt on a terminal, or the first line of stdin in a pipeline. It is checked like a console
 * sign-in (`authenticate`, method `cli`): counted towards the lockout, audited, never stored or
 * echoed. No password, a wrong one, or a locked, disabled or unknown account: refused, nothing
 * changed, with the same message for each.
 */
export async function verifiedActor(db: Db, email: string): Promise<Actor> {
  const password = process.stdin.isTTY
    ? await promptHidden(`Password of ${email} (acting in their name): `, 'cancelled; nothing was changed')
    : await readPipedLine();
  if (!password) {
    throw new Refused(`acting as ${email} needs that user's password: type it at the prompt, or pipe it on stdin; nothing was changed`);
  }
  const result = await authenticate(db, { email, password, method: 'cli' });
  if (!result.ok) {
    throw new Refused(
      `the password for ${email} is not right, or the account is locked or disabled; nothing was changed (a locked account can be unlocked by an admin)`,
    );
  }
  return { id: result.user.id, email: result.user.email, role: result.user.role };
}
