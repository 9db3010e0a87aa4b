import { listAudit } from '@/lib/api/console/audit';
import { loadAuditPage } from '@/lib/console/audit-view';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(listAudit, async ({ db, input }) => ok(await loadAuditPage(db, input)));
