import { getNoticeConfig } from '@/lib/api/console/windows';
import { loadNoticeConfigView } from '@/lib/console/windows';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(getNoticeConfig, async () => ok(loadNoticeConfigView()));
