import { z } from 'zod';
import { consoleContract } from '@/lib/http/contract';
import { cursorTimestamp, text } from '@/lib/api/fields';

export const auditQuery = z.object({
  actor: text().trim().max(320).optional(),
  action: text().trim().max(100).optional(),
  target: text().trim().max(200).optional(),
  beforeAt: cursorTimestamp.optional(),
  beforeId: z.coerce.number().int().positive().optional(),
});

export const auditEntry = z.object({
  id: z.number().int(),
  at: z.iso.datetime({ offset: true }),
  actor: z.string(),
  action: z.string(),
  targetType: z.string(),
  targetId: z.string(),
  reason: z.string(),
  before: z.record(z.string(), z.unknown()).nullable(),
  after: z.record(z.string(), z.unknown()).nullable(),
});
export type AuditEntryView = z.infer<typeof auditEntry>;

export const auditPage = z.object({ rows: z.array(auditEntry), next: z.object({ beforeAt: z.string(), beforeId: z.number().int() }).nullable() });
export type AuditPage = z.infer<typeof auditPage>;

export const listAudit = consoleContract({ method: 'GET', path: '/api/console/audit', permission: 'audit.read', input: auditQuery, output: auditPage });
