import { listQuarantine } from '@/lib/api/console/quarantine';
import { config } from '@/lib/config';
import { loadQuarantinePage } from '@/lib/console/quarantine-view';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(listQuarantine, async ({ db, input }) =>
  ok(await loadQuarantinePage(db, { query: input, quarantineAfterMs: config().QUARANTINE_AFTER })),
);
