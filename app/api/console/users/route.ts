import { createUserContract, listUsersContract } from '@/lib/api/console/users';
import { createConsoleUser, loadUsersPage } from '@/lib/console/users';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(listUsersContract, async ({ db, input }) => ok(await loadUsersPage(db, input)));

export const POST = consoleRoute(createUserContract, async ({ db, input, actor, session }) =>
  createConsoleUser(db, { ...input, actor, actorId: session.user.id }),
);
