import { revokeTokenContract } from '@/lib/api/console/tokens';
import { revokeConsoleToken } from '@/lib/console/tokens';
import { consoleRoute } from '@/lib/http/console-route';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(revokeTokenContract, async ({ db, input, actor }) => revokeConsoleToken(db, { ...input, actor }));
