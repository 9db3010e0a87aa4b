import { guarded, jsonOk } from '@/lib/auth/guard';
import { config } from '@/lib/config';
import { loadStatusOverview } from '@/lib/console/overview';

export const dynamic = 'force-dynamic';

export const GET = guarded('overview.read', async ({ db }) => jsonOk(await loadStatusOverview(db, { now: new Date(), quarantineAfterMs: config().QUARANTINE_AFTER })));
