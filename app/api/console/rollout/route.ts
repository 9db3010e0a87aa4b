import { changeRolloutContract, getRolloutContract } from '@/lib/api/console/rollout';
import { config } from '@/lib/config';
import { cancelEnforceRequest, loadRolloutView, requestEnforce, setShadowMode } from '@/lib/controls/rollout';
import { consoleRoute } from '@/lib/http/console-route';
import { ok } from '@/lib/http/refusal';
import { getDb } from '@/lib/process-db';
import { actorOf } from '@/lib/replay/transitions';
import { activeNoticeConfig, noticeTypeLabel } from '@/lib/windows/active';

export const dynamic = 'force-dynamic';

export const GET = consoleRoute(getRolloutContract, async ({ db }) =>
  ok(
    await loadRolloutView(db, {
      fallbackMode: config().LEDGER_MODE,
      notices: activeNoticeConfig(),
      label: noticeTypeLabel,
      refreshMs: config().RUNTIME_CONTROLS_REFRESH,
    }),
  ),
);

export const POST = consoleRoute(changeRolloutContract, async ({ input, actor, session }) => {
  if (input.action === 'shadow') return setShadowMode(getDb(), { actor, reason: input.reason });
  if (input.action === 'cancel_request') return cancelEnforceRequest(getDb(), { actor, reason: input.reason });
  return requestEnforce(getDb(), { actor: actorOf(session), reason: input.reason });
});
