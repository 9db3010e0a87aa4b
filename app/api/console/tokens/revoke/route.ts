import { guarded, jsonError, jsonOk, parseBody } from '@/lib/auth/guard';
import { revokeTokenRequest } from '@/lib/console/requests';
import { revokeConsoleToken } from '@/lib/console/tokens';

export const dynamic = 'force-dynamic';

export const POST = guarded('tokens.manage', async ({ db, request, actor }) => {
  const body = await parseBody(request, revokeTokenRequest);
  if (!body.ok) return body.response;
  const result = await revokeConsoleToken(db, { ...body.data, actor });
  return result.ok ? jsonOk(result.data) : jsonError(404, result.error);
});
