import { resetUserPasswordContract } from '@/lib/api/console/users';
import { resetUserPassword } from '@/lib/console/users';
import { consoleRoute } from '@/lib/http/console-route';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(resetUserPasswordContract, async ({ db, input, actor, session }) =>
  resetUserPassword(db, { ...input, actor, actorId: session.user.id }),
);
