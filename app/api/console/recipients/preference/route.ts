import { getDb } from '@/lib/process-db';
import { changePreference } from '@/lib/api/console/recipients';
import { changeRecipientPreference } from '@/lib/console/recipients';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const POST = consoleRoute(changePreference, async ({ input, actor }) =>
  ok(await changeRecipientPreference(getDb(), { email: input.email, state: input.state, reason: input.reason, actor })),
);
