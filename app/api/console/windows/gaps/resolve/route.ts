import { resolveGapContract } from '@/lib/api/console/windows';
import { resolveComplianceGap } from '@/lib/console/windows';
import { consoleRoute } from '@/lib/http/console-route';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(resolveGapContract, async ({ db, input, actor }) => resolveComplianceGap(db, { ...input, actor }));
