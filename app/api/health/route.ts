import { getHealth } from '@/lib/api/health';
import { publicRoute } from '@/lib/http/public-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const GET = publicRoute(getHealth, async () => ok({ status: 'ok' as const }));
