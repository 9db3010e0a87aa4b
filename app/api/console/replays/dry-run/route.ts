import { guarded, jsonError, jsonOk, parseBody } from '@/lib/auth/guard';
import { config } from '@/lib/config';
import { dryRunRequest } from '@/lib/replay/requests';
import { dryRunFilter, dryRunUpload } from '@/lib/replay/service';

export const dynamic = 'force-dynamic';

/** Counts what a replay would mint; changes nothing. */
export const POST = guarded('replay.request', async ({ db, request }) => {
  const body = await parseBody(request, dryRunRequest);
  if (!body.ok) return body.response;
  if ('filter' in body.data) return jsonOk({ ...(await dryRunFilter(db, { filter: body.data.filter })), accepted: null, rejections: [] });
  const check = await dryRunUpload(db, { csv: body.data.csv, secret: config().NOTICE_KEY_SECRET });
  if (!check.ok) return jsonError(400, { code: 'invalid_input', message: check.error });
  return jsonOk(check.dryRun);
});
