import { guarded, jsonError, jsonOk, parseBody } from '@/lib/auth/guard';
import { setDisabledRequest } from '@/lib/console/requests';
import { changeUserDisabled } from '@/lib/console/users';

export const dynamic = 'force-dynamic';

export const POST = guarded('users.manage', async ({ db, request, actor, session }) => {
  const body = await parseBody(request, setDisabledRequest);
  if (!body.ok) return body.response;
  const result = await changeUserDisabled(db, { ...body.data, actor, actorId: session.user.id });
  return result.ok ? jsonOk(result.data) : jsonError(result.error.code === 'not_found' ? 404 : 409, result.error);
});
