import { guarded, jsonError, jsonOk, parseBody, parseQuery } from '@/lib/auth/guard';
import { createUserRequest, usersQuery } from '@/lib/console/requests';
import { createConsoleUser, loadUsersPage } from '@/lib/console/users';

export const dynamic = 'force-dynamic';

export const GET = guarded('users.manage', async ({ db, request }) => {
  const query = parseQuery(request, usersQuery);
  if (!query.ok) return query.response;
  return jsonOk(await loadUsersPage(db, query.data));
});

export const POST = guarded('users.manage', async ({ db, request, actor }) => {
  const body = await parseBody(request, createUserRequest);
  if (!body.ok) return body.response;
  const result = await createConsoleUser(db, { ...body.data, actor });
  return result.ok ? jsonOk(result.data, 201) : jsonError(409, result.error);
});
