import { recipientPreferencesRoute } from '@/lib/api/recipient';
import { ok } from '@/lib/http/refusal';
import { recipientRoute } from '@/lib/http/recipient-route';
import { changeCourtesyPreference } from '@/lib/recipient/actions';

export const dynamic = 'force-dynamic';

export const POST = recipientRoute(recipientPreferencesRoute, async ({ db, notice, input }) => {
  const result = await changeCourtesyPreference({ db, notice, channel: input.channel, state: input.state });
  if (!result.ok) return result;
  return ok({ kind: 'done' as const, data: result.data, flash: 'preferences_saved' as const });
});
