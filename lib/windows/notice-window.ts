import type { NoticeConfig, RuleSet } from './load-config';
import { planEvent, type UnplannedReason, type Window } from './plan';
import type { Contract } from './rules';

/** Before every anchor: planning "from the beginning of time" leaves the window unclamped by now. */
const BEGINNING = new Date(-8.64e15);

export type NoticeWindow =
  | { ok: true; window: Window; ruleIds: string[]; ruleSetVersion: string; category: 'required' | 'courtesy' }
  | { ok: false; reason: UnplannedReason | 'no_rule_applies'; detail: string; ruleIds: string[]; category: 'required' | 'courtesy' };

/**
 * One notice type's allowed window for an anchor — merchant window ∩ every applicable rule —
 * without the planner's "not in the past" and without quiet hours: a producer that picks its own
 * `dueAt` (POST /api/v1/reminders with `anchorAt`) is checked against this, and a `dueAt` already
 * past but before `latest` is sent at once. Computed by the planner itself, so the two cannot
 * disagree about a rule.
 */
export function windowForNotice({
  config,
  ruleSet,
  noticeType,
  anchorAt,
  region,
  timeZone,
  contract = {},
}: {
  config: NoticeConfig;
  ruleSet: RuleSet;
  noticeType: string;
  anchorAt: Date;
  region: string | null;
  timeZone: string;
  contract?: Contract;
}): NoticeWindow {
  const type = config.noticeTypes[noticeType];
  if (!type) throw new Error(`unknown notice type "${noticeType}"`);
  const only: NoticeConfig = { ...config, noticeTypes: { [noticeType]: { ...type, enabled: true, quietHours: null } } };
  const plan = planEvent({
    config: only,
    ruleSet,
    event: { type: type.event, anchorAt, recipient: { region: region ?? '', timeZone }, contract },
    now: BEGINNING,
  });
  const planned = plan.planned[0];
  if (planned) return { ok: true, window: planned.window, ruleIds: planned.ruleIds, ruleSetVersion: planned.ruleSetVersion, category: type.category };
  const unplanned = plan.unplanned[0];
  if (unplanned) return { ok: false, reason: unplanned.reason, detail: unplanned.detail, ruleIds: unplanned.ruleIds, category: type.category };
  return {
    ok: false,
    reason: 'no_rule_applies',
    detail: `no enabled rule for ${type.obligation ?? type.name} applies to region ${region ?? '(none given)'}`,
    ruleIds: [],
    category: type.category,
  };
}
