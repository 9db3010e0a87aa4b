import { countQuarantined } from '@/db/queries/ledger/read';
import { countQuarantine } from '@/lib/api/console/quarantine';
import { config } from '@/lib/config';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(countQuarantine, async ({ db, input }) =>
  ok({ count: await countQuarantined(db, { quarantineAfterMs: config().QUARANTINE_AFTER, selection: input.selection }) }),
);
