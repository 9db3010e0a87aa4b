import { createTokenContract, listTokensContract } from '@/lib/api/console/tokens';
import { createConsoleToken, loadTokens } from '@/lib/console/tokens';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(listTokensContract, async ({ db }) => ok(await loadTokens(db)));

export const POST = consoleRoute(createTokenContract, async ({ db, input, actor, session }) =>
  createConsoleToken(db, { ...input, actor, actorId: session.user.id }),
);
