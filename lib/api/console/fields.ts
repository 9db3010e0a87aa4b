import { z } from 'zod';

/** Fields several console contracts share. */

/** PostgreSQL text cannot hold NUL: refused here as a 400, it would otherwise fail the query as a 500. */
export const text = () => z.string().regex(/^[^\0]*$/, 'must not contain NUL characters');

/** Why a person did something: every console mutation takes one, and it goes to the audit log. */
export const reason = () => text().trim().min(3, 'say why, in a few words').max(500);

/**
 * A keyset cursor as PostgreSQL prints a timestamptz ("2026-11-29 02:07:30.123456+00").
 * Checked field by field: Feb 30 or hour 25 would pass a shape regex and fail the cast in SQL.
 */
export const cursorTimestamp = z
  .string()
  .max(40)
  .regex(
    /^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[ T]([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,6})?)?(Z|[+-](0\d|1[0-5])(:?[0-5]\d)?)?$/,
    'must be a timestamp',
  )
  .refine((value) => {
    const [year, month, day] = value.slice(0, 10).split('-').map(Number);
    return new Date(Date.UTC(year ?? 0, (month ?? 1) - 1, day ?? 1)).getUTCDate() === day;
  }, 'must be a timestamp');

export const instant = z.iso.datetime({ offset: true });

/**
 * The configured notice type names (NOTICE_CONFIG), which only the server can read. The server's
 * console route builder and pages hand them over (lib/http/console-route.ts); a contract parsed in
 * the browser checks a type's shape only, and the server answers for the rest.
 */
let configuredNoticeTypes: () => readonly string[] = () => [];

export function checkNoticeTypesAgainst(names: () => readonly string[]): void {
  configuredNoticeTypes = names;
}

/** A notice type in a filter: one of the configured names, refused with zod's own enum wording. */
export const noticeTypeName = text()
  .max(64)
  .superRefine((value, ctx) => {
    const names = configuredNoticeTypes();
    if (names.length > 0 && !names.includes(value)) ctx.addIssue({ code: 'invalid_value', values: [...names], input: value });
  });
