import { listMissed } from '@/lib/api/console/windows';
import { loadMissedPage } from '@/lib/console/windows';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(listMissed, async ({ db, input }) => ok(await loadMissedPage(db, { now: new Date(), input })));
