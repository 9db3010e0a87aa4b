import { beginMfaContract } from '@/lib/api/console/users';
import { beginMfaEnrollment } from '@/lib/console/mfa';
import { consoleRoute } from '@/lib/http/console-route';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(beginMfaContract, async ({ db, input, session }) =>
  beginMfaEnrollment(db, { userId: session.user.id, email: session.user.email, currentPassword: input.currentPassword }),
);
