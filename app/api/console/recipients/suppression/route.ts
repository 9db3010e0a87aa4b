import { getDb } from '@/lib/process-db';
import { changeSuppression } from '@/lib/api/console/recipients';
import { changeRecipientSuppression } from '@/lib/console/recipients';
import { consoleRoute } from '@/lib/http/console-route';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(changeSuppression, async ({ input, actor, session }) =>
  changeRecipientSuppression(getDb(), { ...input, actor, role: session.user.role }),
);
