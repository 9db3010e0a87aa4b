import { guarded, jsonError, jsonOk, parseQuery } from '@/lib/auth/guard';
import { config } from '@/lib/config';
import { lookupNotices } from '@/lib/console/lookup';
import { lookupQuery } from '@/lib/console/requests';

export const dynamic = 'force-dynamic';

export const GET = guarded('lookup.read', async ({ db, request }) => {
  const query = parseQuery(request, lookupQuery);
  if (!query.ok) return query.response;
  const result = await lookupNotices(db, { query: query.data.q, secret: config().NOTICE_KEY_SECRET, messageIdDomain: config().MESSAGE_ID_DOMAIN });
  if ('error' in result) return jsonError(400, { code: 'invalid_input', message: result.error });
  return jsonOk(result);
});
