import { dictionary } from '@zxcvbn-ts/language-common';
import { MAX_NEW_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from './password-rules';

/**
 * The most common passwords of public breach corpora, bundled with the project (no network):
 * the 49 233 entries of `@zxcvbn-ts/language-common`'s `passwords-common` list, the one zxcvbn
 * weighs first. Compared case-insensitively, so "Password123456" is as refused as its lower case.
 */
let breached: Set<string> | undefined;
function breachedPasswords(): Set<string> {
  breached ??= new Set(dictionary['passwords-common'].map((entry) => String(entry).toLowerCase()));
  return breached;
}

export function isBreachedPassword(password: string): boolean {
  return breachedPasswords().has(password.normalize('NFKC').toLowerCase());
}

/** Why a new password is refused (a sentence for the form), or null when it may be set. */
export function newPasswordProblem({ password, email }: { password: string; email: string }): string | null {
  if (password.length < MIN_PASSWORD_LENGTH) return `Choose a password of at least ${MIN_PASSWORD_LENGTH} characters.`;
  if (password.length > MAX_NEW_PASSWORD_LENGTH) return `Choose a password of at most ${MAX_NEW_PASSWORD_LENGTH} characters.`;
  if (isBreachedPassword(password)) return 'This password is on a list of passwords leaked in public breaches; choose another.';
  if (password.trim().toLowerCase() === email.trim().toLowerCase()) return 'A password cannot be your email address.';
  return null;
}
