import { resolveQuarantineContract } from '@/lib/api/console/quarantine';
import { config } from '@/lib/config';
import { resolveQuarantine } from '@/lib/console/quarantine';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(resolveQuarantineContract, async ({ db, input, actor }) =>
  ok(await resolveQuarantine(db, { ...input, actor, quarantineAfterMs: config().QUARANTINE_AFTER })),
);
