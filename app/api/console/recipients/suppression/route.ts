import { getDb } from '@/db/client';
import { changeSuppression } from '@/lib/api/console/recipients';
import { changeRecipientSuppression } from '@/lib/console/recipients';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(changeSuppression, async ({ input, actor }) => ok(await changeRecipientSuppression(getDb(), { ...input, actor })));
