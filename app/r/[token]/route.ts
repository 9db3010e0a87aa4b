import { recipientPageRoute } from '@/lib/api/recipient';
import { ok } from '@/lib/http/refusal';
import { recipientRoute } from '@/lib/http/recipient-route';
import { loadRecipientPage } from '@/lib/recipient/page';

export const dynamic = 'force-dynamic';

/** The page a notice links to (outside the console's session: proxy.ts does not match /r/). */
export const GET = recipientRoute(recipientPageRoute, async ({ db, notice, type, input, pageUrl }) =>
  ok({ kind: 'page' as const, html: await loadRecipientPage(db, { notice, type, flash: input.flash ?? null, pageUrl }) }),
);
