import { regenerateRecoveryCodesContract } from '@/lib/api/console/users';
import { regenerateRecoveryCodes } from '@/lib/console/mfa';
import { consoleRoute } from '@/lib/http/console-route';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(regenerateRecoveryCodesContract, async ({ db, input, session }) =>
  regenerateRecoveryCodes(db, { ...input, userId: session.user.id, email: session.user.email }),
);
