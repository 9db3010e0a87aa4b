import { getDb } from '@/lib/process-db';
import { cancelNotice } from '@/lib/api/console/recipients';
import { cancelNoticeForSupport } from '@/lib/console/recipients';
import { consoleRoute } from '@/lib/http/console-route';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(cancelNotice, async ({ input, actor }) => cancelNoticeForSupport(getDb(), { ...input, actor, now: new Date() }));
