import { listFailuresContract } from '@/lib/api/console/failures';
import { config } from '@/lib/config';
import { loadFailuresPage } from '@/lib/console/failures';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(listFailuresContract, async ({ db, input }) =>
  ok(await loadFailuresPage(db, { now: new Date(), input, approvalAbove: config().BULK_RETRY_APPROVAL_ABOVE })),
);
