import { setUserRoleContract } from '@/lib/api/console/users';
import { changeUserRole } from '@/lib/console/users';
import { consoleRoute } from '@/lib/http/console-route';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(setUserRoleContract, async ({ db, input, actor, session }) =>
  changeUserRole(db, { ...input, actor, actorId: session.user.id }),
);
