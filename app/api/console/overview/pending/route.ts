import { after } from 'next/server';
import { getPendingOverview } from '@/lib/api/console/overview';
import { loadPendingOverview } from '@/lib/console/overview';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(getPendingOverview, async ({ db }) => ok(await loadPendingOverview(db, { now: new Date(), recountLater: after })));
