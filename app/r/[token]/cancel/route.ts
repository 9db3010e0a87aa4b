import { recipientCancelRoute } from '@/lib/api/recipient';
import { ok } from '@/lib/http/refusal';
import { recipientRoute } from '@/lib/http/recipient-route';
import { requestCancellation } from '@/lib/recipient/actions';

export const dynamic = 'force-dynamic';

export const POST = recipientRoute(recipientCancelRoute, async ({ db, notice, type, input, throttle }) => {
  const result = await requestCancellation({ db, notice, type, code: input.code, throttle });
  if (!result.ok) return result;
  const outcome = result.data;
  if (outcome.status === 'redirect') return ok({ kind: 'done' as const, data: outcome, location: outcome.location });
  return ok({
    kind: 'done' as const,
    data: { status: outcome.status, requestedAt: outcome.requestedAt.toISOString() },
    flash: outcome.status === 'requested' ? ('cancel_requested' as const) : ('cancel_already' as const),
  });
});
