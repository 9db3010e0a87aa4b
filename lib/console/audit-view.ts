import 'server-only';
import type { DbOrTx } from '@/db/client';
import { listAuditEntries } from '@/db/queries/audit';
import type { AuditPage } from '@/lib/api/console/audit';

export const AUDIT_PAGE_SIZE = 50;

export async function loadAuditPage(
  db: DbOrTx,
  query: { actor?: string; action?: string; target?: string; beforeAt?: string; beforeId?: number },
): Promise<AuditPage> {
  const before = query.beforeAt && query.beforeId ? { at: query.beforeAt, id: query.beforeId } : undefined;
  const rows = await listAuditEntries(db, {
    filter: { actor: query.actor || undefined, action: query.action || undefined, target: query.target || undefined },
    before,
    limit: AUDIT_PAGE_SIZE + 1,
  });
  const page = rows.slice(0, AUDIT_PAGE_SIZE);
  const last = page[page.length - 1];
  return {
    rows: page.map(({ cursorAt: _cursor, ...row }) => ({ ...row, at: row.at.toISOString() })),
    next: rows.length > AUDIT_PAGE_SIZE && last ? { beforeAt: last.cursorAt, beforeId: last.id } : null,
  };
}
