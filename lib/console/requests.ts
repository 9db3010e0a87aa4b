import { z } from 'zod';
import { noticeTypeNames } from '@/lib/ledger/notice-types';
import { roles } from '@/lib/auth/roles';
import { timeRangeNames, DEFAULT_RANGE, type TimeRange } from './overview-model';

/** The console's request schemas, one per route, next to nothing else so client and server share them. */

export const rangeQuery = z.object({ range: z.enum(timeRangeNames as [TimeRange, ...TimeRange[]]).default(DEFAULT_RANGE) });

export const lookupQuery = z.object({ q: z.string().trim().min(1, 'type something to search for').max(320) });

const noticeKeyHex = z.string().regex(/^[0-9a-f]{64}$/, 'must be a 64-character notice key');

export const quarantineFilter = z.strictObject({
  olderThanMinutes: z.coerce.number().int().min(0).max(525_600).optional(),
  recipientDomain: z.string().trim().toLowerCase().max(253).regex(/^[a-z0-9.-]*$/, 'must be a domain').optional(),
  noticeType: z.enum(noticeTypeNames as [string, ...string[]]).optional(),
});

export const quarantineListQuery = quarantineFilter.extend({
  afterClaimedAt: z.string().max(40).regex(/^\d{4}-\d\d-\d\d[ T][\d:.+-]+$/, 'must be a timestamp').optional(),
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
  reason: z.string().trim().min(3, 'say why, in a few words').max(500),
});

export const auditQuery = z.object({
  actor: z.string().trim().max(320).optional(),
  action: z.string().trim().max(100).optional(),
  target: z.string().trim().max(200).optional(),
  beforeAt: z.string().max(40).regex(/^\d{4}-\d\d-\d\d[ T][\d:.+-]+$/, 'must be a timestamp').optional(),
  beforeId: z.coerce.number().int().positive().optional(),
});

export const usersQuery = z.object({ after: z.string().max(320).optional() });

export const createUserRequest = z.strictObject({
  email: z.email().max(320),
  name: z.string().trim().min(1).max(200),
  role: z.enum(roles),
  password: z.string().min(12, 'at least 12 characters').max(1024).optional(),
  reason: z.string().trim().min(3).max(500),
});

export const setRoleRequest = z.strictObject({ id: z.uuid(), role: z.enum(roles), reason: z.string().trim().min(3).max(500) });

export const setDisabledRequest = z.strictObject({ id: z.uuid(), disabled: z.boolean(), reason: z.string().trim().min(3).max(500) });

export const createTokenRequest = z.strictObject({ name: z.string().trim().min(1).max(200), reason: z.string().trim().min(3).max(500) });

export const revokeTokenRequest = z.strictObject({ id: z.uuid(), reason: z.string().trim().min(3).max(500) });
