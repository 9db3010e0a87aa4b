import { unlockUserContract } from '@/lib/api/console/users';
import { unlockConsoleUser } from '@/lib/console/users';
import { consoleRoute } from '@/lib/http/console-route';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(unlockUserContract, async ({ db, input, actor }) => unlockConsoleUser(db, { ...input, actor }));
