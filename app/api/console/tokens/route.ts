import { guarded, jsonOk, parseBody } from '@/lib/auth/guard';
import { createTokenRequest } from '@/lib/console/requests';
import { createConsoleToken, loadTokens } from '@/lib/console/tokens';

export const dynamic = 'force-dynamic';

export const GET = guarded('tokens.manage', async ({ db }) => jsonOk(await loadTokens(db)));

export const POST = guarded('tokens.manage', async ({ db, request, actor, session }) => {
  const body = await parseBody(request, createTokenRequest);
  if (!body.ok) return body.response;
  return jsonOk(await createConsoleToken(db, { ...body.data, actor, actorId: session.user.id }), 201);
});
