import { setUserDisabledContract } from '@/lib/api/console/users';
import { changeUserDisabled } from '@/lib/console/users';
import { consoleRoute } from '@/lib/http/console-route';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(setUserDisabledContract, async ({ db, input, actor, session }) =>
  changeUserDisabled(db, { ...input, actor, actorId: session.user.id }),
);
