import { listGaps } from '@/lib/api/console/windows';
import { loadGapPage } from '@/lib/console/windows';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(listGaps, async ({ db, input }) => ok(await loadGapPage(db, { now: new Date(), input })));
