import { backfillContract } from '@/lib/api/console/rollout';
import { countsOf, runBackfill } from '@/lib/controls/rollout';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';
import { getDb } from '@/lib/process-db';

export const dynamic = 'force-dynamic';

/** From the job table only (a CSV of notices sent elsewhere goes through `npm run ledger -- backfill --csv`). */
export const POST = consoleRoute(backfillContract, async ({ input, actor }) =>
  ok(countsOf(await runBackfill(getDb(), { source: { kind: 'jobs', limit: 100_000 }, dryRun: input.dryRun, actor, reason: input.reason }))),
);
