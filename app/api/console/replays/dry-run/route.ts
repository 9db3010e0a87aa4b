import { dryRunReplayContract } from '@/lib/api/console/replays';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';
import { dryRunFilter, dryRunValidated } from '@/lib/replay/service';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(dryRunReplayContract, async ({ db, input, upload }) => {
  if ('filter' in input) return ok({ ...(await dryRunFilter(db, { filter: input.filter })), accepted: null, rejections: [] });
  // The file arrived validated (streamed, lib/replay/upload-body.ts); input.csv only marks it.
  const check = await dryRunValidated(db, { validation: upload ?? { ok: false, error: 'The file is empty.' } });
  return check.ok ? ok(check.data.dryRun) : check;
});
