import { chooseDueTime } from './due-time';
import { noticeTypesFor, type NoticeConfig, type NoticeType, type RuleSet } from './load-config';
import { ruleBounds, type Window } from './rule-window';
import { anchorInstant, applicableRules, ruleRef, type Contract, type Rule } from './rules';
import { isTimeZone } from '@/lib/api/fields';

/**
 * Business event in, planned notices out — pure, with the clock injected. For every enabled
 * notice type the event triggers, the allowed window is
 *
 *   merchant window ∩ every applicable rule ∩ [now, ∞)
 *
 * and the due time is chosen inside it (`due-time.ts`). A courtesy notice has only its merchant
 * window. A required notice is called for when at least one rule for its obligation applies to
 * the recipient's region and contract; when its window is empty it is returned in `unplanned`
 * with the rules and the reason — a compliance gap to show, never a notice silently dropped.
 */

export type { Window };

export type PlanningEvent = {
  type: string;
  /** The instant the event is about: the charge, the reconciliation. */
  anchorAt: Date;
  recipient: { region: string; timeZone: string };
  contract: Contract;
};

export type PlannedNotice = {
  noticeType: string;
  category: NoticeType['category'];
  channel: NoticeType['channel'];
  template: string;
  window: Window;
  dueAt: Date;
  /** `id@version` of every rule that bounded the window. */
  ruleIds: string[];
  ruleSetVersion: string;
  /** What the notice must carry, from the rules (`online_cancel_link`, `dedicated_message`…). */
  requirements: string[];
  /** `issuer` when a rule makes it the card issuer's duty (recorded; the merchant sends it anyway unless switched off). */
  dutyHolders: Rule['dutyHolder'][];
  /** `overridden`: quiet hours covered the whole window and a required notice went inside them. */
  quietHours: 'clear' | 'moved' | 'overridden';
};

export type UnplannedReason =
  /** The window lies wholly before `now`: the anchor is too close (e.g. under a 15-day floor). */
  | 'window_passed'
  /** Two applicable rules leave no common instant. */
  | 'rules_conflict'
  /** The rules' window and the operator's merchant window do not meet. */
  | 'outside_merchant_window'
  /** Courtesy only: the recipient's quiet hours cover what is left of the window. */
  | 'quiet_hours_cover_window';

export type UnplannedNotice = {
  noticeType: string;
  category: NoticeType['category'];
  reason: UnplannedReason;
  detail: string;
  ruleIds: string[];
  ruleSetVersion: string;
};

export type Plan = { planned: PlannedNotice[]; unplanned: UnplannedNotice[] };

type Interval = { earliest: number; latest: number };

const intersect = (a: Interval, b: Interval): Interval => ({ earliest: Math.max(a.earliest, b.earliest), latest: Math.min(a.latest, b.latest) });
const isEmpty = (interval: Interval) => interval.earliest > interval.latest;

/** A rule's interval; an open side is the whole past, or the rule's own anchor (every rule is "before"). */
function ruleInterval(rule: Rule, event: PlanningEvent): Interval {
  const anchor = anchorInstant(rule.anchor, event.anchorAt, event.contract);
  const bounds = ruleBounds(rule.window, anchor, event.recipient.timeZone);
  return { earliest: bounds.earliest?.getTime() ?? -Infinity, latest: (bounds.latest ?? anchor).getTime() };
}

export function planEvent({ config, ruleSet, event, now }: { config: NoticeConfig; ruleSet: RuleSet; event: PlanningEvent; now: Date }): Plan {
  if (!config.eventTypes[event.type]) throw new Error(`unknown event type "${event.type}"; configured: ${Object.keys(config.eventTypes).join(', ')}`);
  // The boundary validates the zone; a bad one here would otherwise surface as Intl's RangeError.
  if (!isTimeZone(event.recipient.timeZone)) throw new Error(`unknown time zone "${event.recipient.timeZone}"`);
  const plan: Plan = { planned: [], unplanned: [] };
  for (const type of noticeTypesFor(config, event.type)) {
    const rules =
      type.obligation === null
        ? []
        : applicableRules({ rules: ruleSet.rules, obligation: type.obligation, region: event.recipient.region, contract: event.contract });
    if (type.category === 'required' && rules.length === 0) continue; // not called for here
    planOne({ type, rules, event, now, ruleSetVersion: ruleSet.version, into: plan });
  }
  return plan;
}

function planOne({
  type,
  rules,
  event,
  now,
  ruleSetVersion,
  into,
}: {
  type: NoticeType;
  rules: Rule[];
  event: PlanningEvent;
  now: Date;
  ruleSetVersion: string;
  into: Plan;
}): void {
  const ruleIds = rules.map(ruleRef);
  const gap = (reason: UnplannedReason, detail: string): void => {
    into.unplanned.push({ noticeType: type.name, category: type.category, reason, detail, ruleIds, ruleSetVersion });
  };

  let legal: Interval = { earliest: -Infinity, latest: Infinity };
  for (const rule of rules) legal = intersect(legal, ruleInterval(rule, event));
  if (isEmpty(legal)) return gap('rules_conflict', `the windows of ${ruleIds.join(', ')} have no instant in common`);

  let allowed = legal;
  if (type.window) {
    const anchor = event.anchorAt.getTime();
    allowed = intersect(legal, { earliest: anchor + type.window.from, latest: anchor + type.window.to });
    if (isEmpty(allowed)) return gap('outside_merchant_window', `the merchant window of ${type.name} does not meet the rules' window`);
  }
  if (allowed.latest < now.getTime())
    return gap('window_passed', `the window closed at ${new Date(allowed.latest).toISOString()}, before ${now.toISOString()}`);
  const window = { earliest: new Date(Math.max(allowed.earliest, now.getTime())), latest: new Date(allowed.latest) };

  const due = chooseDueTime({ window, quietHours: type.quietHours, timeZone: event.recipient.timeZone });
  if (due.quietHours === 'covers_window' && type.category === 'courtesy') {
    return gap('quiet_hours_cover_window', `quiet hours cover ${window.earliest.toISOString()}–${window.latest.toISOString()}`);
  }
  into.planned.push({
    noticeType: type.name,
    category: type.category,
    channel: type.channel,
    template: type.template,
    window,
    dueAt: due.dueAt,
    ruleIds,
    ruleSetVersion,
    requirements: [...new Set(rules.flatMap((rule) => rule.requirements))],
    dutyHolders: [...new Set(rules.map((rule) => rule.dutyHolder))],
    // A law's window outranks the recipient's night: a required notice goes out inside quiet hours
    // rather than not at all.
    quietHours: due.quietHours === 'covers_window' ? 'overridden' : due.quietHours,
  });
}
