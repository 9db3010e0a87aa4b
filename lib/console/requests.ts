import { z } from 'zod';
import { noticeTypeNames } from '@/lib/ledger/notice-types';
import { roles } from '@/lib/auth/roles';
import { timeRangeNames, DEFAULT_RANGE, type TimeRange } from './overview-model';

/** The console's request schemas, one per route, next to nothing else so client and server share them. */

/** PostgreSQL text cannot hold NUL: refused here as a 400, it would otherwise fail the query as a 500. */
const text = () => z.string().regex(/^[^\0]*$/, 'must not contain NUL characters');

/**
 * A keyset cursor as PostgreSQL prints a timestamptz ("2026-11-29 02:07:30.123456+00").
 * Checked field by field: Feb 30 or hour 25 would pass a shape regex and fail the cast in SQL.
 */
const cursorTimestamp = z
  .string()
  .max(40)
  .regex(/^\d{4}-(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])[ T]([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,6})?)?(Z|[+-](0\d|1[0-5])(:?[0-5]\d)?)?$/, 'must be a timestamp')
  .refine((value) => {
    const [year, month, day] = value.slice(0, 10).split('-').map(Number);
    return new Date(Date.UTC(year ?? 0, (month ?? 1) - 1, day ?? 1)).getUTCDate() === day;
  }, 'must be a timestamp');

export const rangeQuery = z.object({ range: z.enum(timeRangeNames as [TimeRange, ...TimeRange[]]).default(DEFAULT_RANGE) });

export const lookupQuery = z.object({ q: text().trim().min(1, 'type something to search for').max(320) });

const noticeKeyHex = z.string().regex(/^[0-9a-f]{64}$/, 'must be a 64-character notice key');

export const quarantineFilter = z.strictObject({
  olderThanMinutes: z.coerce.number().int().min(0).max(525_600).optional(),
  recipientDomain: text().trim().toLowerCase().max(253).regex(/^[a-z0-9.-]*$/, 'must be a domain').optional(),
  noticeType: z.enum(noticeTypeNames as [string, ...string[]]).optional(),
});

export const quarantineListQuery = quarantineFilter.extend({
  afterClaimedAt: cursorTimestamp.optional(),
  afterKey: noticeKeyHex.optional(),
});

export const quarantineSelection = z.union([
  z.strictObject({ keys: z.array(noticeKeyHex).min(1).max(5_000) }),
  z.strictObject({ filter: quarantineFilter }),
]);

export const quarantineCountRequest = z.strictObject({ selection: quarantineSelection });

export const quarantineResolveRequest = z.strictObject({
  action: z.enum(['confirm_sent', 'release', 'suppress']),
  selection: quarantineSelection,
  reason: text().trim().min(3, 'say why, in a few words').max(500),
});

export const auditQuery = z.object({
  actor: text().trim().max(320).optional(),
  action: text().trim().max(100).optional(),
  target: text().trim().max(200).optional(),
  beforeAt: cursorTimestamp.optional(),
  beforeId: z.coerce.number().int().positive().optional(),
});

export const usersQuery = z.object({ after: text().max(320).optional() });

export const createUserRequest = z.strictObject({
  email: z.email().max(320),
  name: text().trim().min(1).max(200),
  role: z.enum(roles),
  password: z.string().min(12, 'at least 12 characters').max(1024).optional(),
  reason: text().trim().min(3).max(500),
});

export const setRoleRequest = z.strictObject({ id: z.uuid(), role: z.enum(roles), reason: text().trim().min(3).max(500) });

export const setDisabledRequest = z.strictObject({ id: z.uuid(), disabled: z.boolean(), reason: text().trim().min(3).max(500) });

export const createTokenRequest = z.strictObject({ name: text().trim().min(1).max(200), reason: text().trim().min(3).max(500) });

export const revokeTokenRequest = z.strictObject({ id: z.uuid(), reason: text().trim().min(3).max(500) });
