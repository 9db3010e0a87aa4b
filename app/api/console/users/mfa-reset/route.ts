import { resetUserMfaContract } from '@/lib/api/console/users';
import { resetUserMfa } from '@/lib/console/mfa';
import { consoleRoute } from '@/lib/http/console-route';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(resetUserMfaContract, async ({ db, input, actor, session }) =>
  resetUserMfa(db, { ...input, actor, actorId: session.user.id }),
);
