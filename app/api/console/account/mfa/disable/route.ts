import { disableMfaContract } from '@/lib/api/console/users';
import { disableOwnMfa } from '@/lib/console/mfa';
import { consoleRoute } from '@/lib/http/console-route';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(disableMfaContract, async ({ db, input, session }) =>
  disableOwnMfa(db, { ...input, userId: session.user.id, email: session.user.email }),
);
