import { changePasswordContract } from '@/lib/api/console/users';
import { changeOwnPassword } from '@/lib/console/users';
import { consoleRoute } from '@/lib/http/console-route';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(changePasswordContract, async ({ db, input, session }) =>
  changeOwnPassword(db, { ...input, userId: session.user.id, email: session.user.email }),
);
