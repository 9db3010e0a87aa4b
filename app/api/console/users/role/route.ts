import { guarded, jsonError, jsonOk, parseBody } from '@/lib/auth/guard';
import { setRoleRequest } from '@/lib/console/requests';
import { changeUserRole } from '@/lib/console/users';

export const dynamic = 'force-dynamic';

export const POST = guarded('users.manage', async ({ db, request, actor, session }) => {
  const body = await parseBody(request, setRoleRequest);
  if (!body.ok) return body.response;
  const result = await changeUserRole(db, { ...body.data, actor, actorId: session.user.id });
  return result.ok ? jsonOk(result.data) : jsonError(result.error.code === 'not_found' ? 404 : 409, result.error);
});
