import { lookupNoticesContract } from '@/lib/api/console/lookup';
import { config } from '@/lib/config';
import { lookupNotices } from '@/lib/console/lookup';
import { consoleRoute } from '@/lib/http/console-route';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(lookupNoticesContract, async ({ db, input }) =>
  lookupNotices(db, { query: input.q, secret: config().NOTICE_KEY_SECRET, messageIdDomain: config().MESSAGE_ID_DOMAIN }),
);
