import { getRecipient } from '@/lib/api/console/recipients';
import { loadRecipientView } from '@/lib/console/recipients';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(getRecipient, async ({ db, input }) => ok(await loadRecipientView(db, { email: input.email })));
