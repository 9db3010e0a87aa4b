import type { DbOrTx } from '@/db/client';
import { insertAuditEntries } from '@/db/queries/audit';
import { throttleKeyOf } from './client-address';

/**
 * Audit actions of the sign-in path. One `sign_in.` prefix so the audit page's action filter
 * (a prefix match) finds all of them with "sign_in." and each one alone by its full name.
 */
export const signInActions = {
  success: 'sign_in.success',
  /** Wrong password, unknown email, malformed input, no console account for a single sign-on email. */
  failure: 'sign_in.failure',
  /** This failure started a lock (written next to that failure's own row). */
  lockout: 'sign_in.lockout',
  /** Refused before any password check: the account is locked or disabled. */
  refused: 'sign_in.refused',
  /**
   * This failure used up its client address's failures for the window: later attempts from
   * that address are refused unread, and unaudited, until the window ends (written next to
   * that failure's own row, once per window).
   */
  throttled: 'sign_in.throttled',
} as const;

/**
 * `cli`: a console user's password typed into `npm run ledger` to act in their name
 * (scripts/ledger-cli.ts); `reauthenticate`: the current password asked again before a password change.
 */
export type SignInMethod = 'credentials' | 'oidc' | 'cli' | 'reauthenticate';

/** Longest stored email (`users.email` is created through `z.email().max(320)`); also the audit page's actor filter limit. */
export const MAX_EMAIL_LENGTH = 320;

/** Control characters (NUL among them) and lone UTF-16 surrogates: PostgreSQL text cannot hold NUL, and none of them belongs on an audit page. */
const UNPRINTABLE = /[\p{Cc}\p{Cs}]/gu;

/**
 * What a sign-in attempt claimed to be, as an audit actor: trimmed and lower-cased like the
 * user lookup, unprintable characters replaced, at most MAX_EMAIL_LENGTH UTF-16 units (a
 * longer one is cut and ends in "…"). Never throws, whatever the input.
 */
export function auditableEmail(raw: string): { text: string; cut: boolean } {
  const trimmed = raw.trim();
  const clean = trimmed
    .slice(0, 2 * MAX_EMAIL_LENGTH)
    .toLowerCase()
    .replace(UNPRINTABLE, '\uFFFD');
  if (clean.length === 0) return { text: '(empty)', cut: false };
  if (trimmed.length <= 2 * MAX_EMAIL_LENGTH && clean.length <= MAX_EMAIL_LENGTH) return { text: clean, cut: false };
  let head = clean.slice(0, MAX_EMAIL_LENGTH - 1);
  if (/[\uD800-\uDBFF]$/.test(head)) head = head.slice(0, -1);
  return { text: `${head}…`, cut: true };
}

/**
 * The attempt names no user (unknown email, or input no stored email can equal): one row, no
 * user created, the target is the email as claimed. `emailLength` records how long the typed
 * email really was when the actor had to be cut.
 */
export async function auditUnknownSignIn(
  db: DbOrTx,
  { email, method, reason, clientAddress }: { email: string; method: SignInMethod; reason: string; clientAddress?: string },
): Promise<void> {
  const actor = auditableEmail(email);
  await insertAuditEntries(db, {
    entries: [
      {
        actor: actor.text,
        action: signInActions.failure,
        targetType: 'email',
        targetId: actor.text,
        reason,
        after: { method, ...addressDetail(clientAddress), ...(actor.cut ? { emailLength: email.length } : {}) },
      },
    ],
  });
}

/** A sign-in row about a known user (refused, or a failure that is not a wrong password): the target is that user. */
export async function auditUserSignIn(
  db: DbOrTx,
  params: {
    user: { id: string; email: string };
    action: (typeof signInActions)[keyof typeof signInActions];
    method: SignInMethod;
    reason: string;
    after?: Record<string, unknown>;
    clientAddress?: string;
  },
): Promise<void> {
  await insertAuditEntries(db, {
    entries: [
      {
        actor: params.user.email,
        action: params.action,
        targetType: 'user',
        targetId: params.user.id,
        reason: params.reason,
        after: { method: params.method, ...addressDetail(params.clientAddress), ...params.after },
      },
    ],
  });
}

/** A disabled account's sign-in, refused whichever way it came (password or single sign-on). */
export async function auditDisabledSignIn(
  db: DbOrTx,
  { user, disabledAt, method, clientAddress }: { user: { id: string; email: string }; disabledAt: Date; method: SignInMethod; clientAddress?: string },
): Promise<void> {
  await auditUserSignIn(db, {
    user,
    action: signInActions.refused,
    method,
    reason: 'account disabled',
    after: { disabledAt: disabledAt.toISOString() },
    clientAddress,
  });
}

/** The `clientAddress` of a sign-in row's `after`, present only when a trusted proxy told us. */
export function addressDetail(clientAddress: string | undefined): { clientAddress?: string } {
  return clientAddress ? { clientAddress } : {};
}

/**
 * The failure that used up an address's failures for its window. The target is what the
 * limit counts and now refuses (throttleKeyOf: the address, or an IPv6 address's /64); the
 * actor and `clientAddress` the address whose failure used it up.
 */
export async function auditThrottledAddress(
  db: DbOrTx,
  { address, method, failures, windowMs, retryInMs }: { address: string; method: SignInMethod; failures: number; windowMs: number; retryInMs: number },
): Promise<void> {
  const refused = throttleKeyOf(address);
  const windowSeconds = Math.round(windowMs / 1000);
  const refusedSeconds = Math.ceil(retryInMs / 1000);
  await insertAuditEntries(db, {
    entries: [
      {
        actor: address,
        action: signInActions.throttled,
        targetType: 'address',
        targetId: refused,
        reason: `sign-ins from ${refused === address ? 'this address' : refused} refused for ${refusedSeconds} s after ${failures} failed sign-ins within ${windowSeconds} s`,
        after: { method, clientAddress: address, failures, windowSeconds, refusedSeconds },
      },
    ],
  });
}
