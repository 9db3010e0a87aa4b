import { after } from 'next/server';
import { guarded, jsonOk } from '@/lib/auth/guard';
import { loadPendingOverview } from '@/lib/console/overview';

export const dynamic = 'force-dynamic';

export const GET = guarded('overview.read', async ({ db }) => jsonOk(await loadPendingOverview(db, { now: new Date(), recountLater: after })));
