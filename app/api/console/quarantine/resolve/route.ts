import { guarded, jsonOk, parseBody } from '@/lib/auth/guard';
import { config } from '@/lib/config';
import { resolveQuarantine } from '@/lib/console/quarantine';
import { quarantineResolveRequest } from '@/lib/console/requests';

export const dynamic = 'force-dynamic';

export const POST = guarded('quarantine.resolve', async ({ actor, db, request }) => {
  const body = await parseBody(request, quarantineResolveRequest);
  if (!body.ok) return body.response;
  const outcome = await resolveQuarantine(db, { ...body.data, actor, quarantineAfterMs: config().QUARANTINE_AFTER });
  return jsonOk(outcome);
});
