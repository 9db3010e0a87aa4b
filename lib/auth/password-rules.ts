/** The length rules of a new password, without the breached list (lib/auth/password-policy.ts), so a form can show them without shipping the list. */
export const MIN_PASSWORD_LENGTH = 12;
export const MAX_NEW_PASSWORD_LENGTH = 1024;
