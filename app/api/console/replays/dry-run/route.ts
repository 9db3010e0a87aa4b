import { dryRunReplayContract } from '@/lib/api/console/replays';
import { config } from '@/lib/config';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';
import { dryRunFilter, dryRunUpload } from '@/lib/replay/service';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(dryRunReplayContract, async ({ db, input }) => {
  if ('filter' in input) return ok({ ...(await dryRunFilter(db, { filter: input.filter })), accepted: null, rejections: [] });
  const check = await dryRunUpload(db, { csv: input.csv, secret: config().NOTICE_KEY_SECRET });
  return check.ok ? ok(check.data.dryRun) : check;
});
