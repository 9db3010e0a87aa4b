import { guarded, jsonOk, parseQuery } from '@/lib/auth/guard';
import { loadAuditPage } from '@/lib/console/audit-view';
import { auditQuery } from '@/lib/console/requests';

export const dynamic = 'force-dynamic';

export const GET = guarded('audit.read', async ({ db, request }) => {
  const query = parseQuery(request, auditQuery);
  if (!query.ok) return query.response;
  return jsonOk(await loadAuditPage(db, query.data));
});
