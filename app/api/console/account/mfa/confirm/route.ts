import { confirmMfaContract } from '@/lib/api/console/users';
import { confirmMfaEnrollment } from '@/lib/console/mfa';
import { consoleRoute } from '@/lib/http/console-route';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(confirmMfaContract, async ({ db, input, session }) =>
  confirmMfaEnrollment(db, { userId: session.user.id, email: session.user.email, code: input.code }),
);
