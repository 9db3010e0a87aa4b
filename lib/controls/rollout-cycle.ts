import type { Rule } from '@/lib/windows/rules';

/**
 * "Shadow for one full renewal cycle" as a number of days, from the configuration: the longest of
 * - a contract cycle an enabled rule is written for (`termMonths` / `billingIntervalMonths` ≥ n:
 *   an annual agreement renews once a year, so its duplicates show only within a year), and
 * - the longest lead of one renewal's notices (a rule's `max` before its anchor, a merchant
 *   window's `from` before the anchor, plus its `to` after it): a notice planned that far ahead
 *   is sent only when its window opens.
 * Pure; the Rollout page shows it beside the days spent in shadow, with what it came from.
 */

export type LongestCycle = { days: number; source: string };

const daysPerMonth = 365 / 12;
const dayMs = 86_400_000;

function windowDays(unit: 'hours' | 'days' | 'months', n: number): number {
  if (unit === 'months') return Math.ceil(n * daysPerMonth);
  if (unit === 'hours') return Math.ceil(n / 24);
  return n;
}

/** What the computation reads of the notice configuration and the rule set. */
export type CycleInputs = {
  config: { noticeTypes: Record<string, { window: { from: number; to: number } | null }> };
  ruleSet: { rules: readonly Pick<Rule, 'id' | 'enabled' | 'appliesWhen' | 'window'>[] };
};

export function longestRenewalCycle({ config, ruleSet }: CycleInputs): LongestCycle {
  let best: LongestCycle = { days: 0, source: 'no notice type reaches beyond its anchor' };
  const consider = (days: number, source: string) => {
    if (days > best.days) best = { days, source };
  };
  for (const rule of ruleSet.rules) {
    if (!rule.enabled) continue;
    for (const condition of [...rule.appliesWhen.all, ...(rule.appliesWhen.any ?? [])]) {
      if (condition.op === 'present' || condition.op === 'in' || condition.op === 'lt' || condition.op === 'lte') continue;
      if (condition.field === 'termMonths' || condition.field === 'billingIntervalMonths') {
        consider(Math.ceil(condition.value * daysPerMonth), `${rule.id}: contracts with ${condition.field} ${condition.op} ${condition.value}`);
      }
    }
    const reach = rule.window.max ?? rule.window.min;
    if (reach !== undefined) consider(windowDays(rule.window.unit, reach), `${rule.id}: up to ${reach} ${rule.window.unit} before its anchor`);
  }
  for (const [name, type] of Object.entries(config.noticeTypes)) {
    if (!type.window) continue;
    const span = Math.max(0, -type.window.from) + Math.max(0, type.window.to);
    consider(Math.ceil(span / dayMs), `${name}: its window around the anchor`);
  }
  return best;
}
