import { z } from 'zod';
import { contractSchema, jurisdictionSchema } from '@/lib/api/fields';

/**
 * A jurisdiction rule as data: where it applies, to which contracts, which notice obligation
 * it creates, and the window it puts around an anchor instant. The shipped rules
 * (`default-rules.ts`) are a default; an operator's configuration file may replace, switch
 * off or add rules with the same schema — their counsel decides, the product computes.
 */

export type Contract = z.infer<typeof contractSchema>;

const numericField = z.enum(['termMonths', 'billingIntervalMonths', 'trialDays', 'promoDays']);
type NumericField = z.infer<typeof numericField>;

/** One condition over the contract. A condition on a field the contract lacks is false. */
export const conditionSchema = z.discriminatedUnion('op', [
  z.strictObject({ field: numericField, op: z.enum(['gte', 'gt', 'lte', 'lt', 'eq']), value: z.number() }),
  z.strictObject({ field: z.literal('paymentNetwork'), op: z.literal('in'), value: z.array(z.string()).min(1) }),
  z.strictObject({
    field: z.enum(['priceChange', 'termMonths', 'billingIntervalMonths', 'trialDays', 'promoDays', 'paymentNetwork']),
    op: z.literal('present'),
  }),
]);
export type Condition = z.infer<typeof conditionSchema>;

/** `all` must hold and, when given, at least one of `any`. Empty: every contract. */
export const predicateSchema = z.strictObject({
  all: z.array(conditionSchema).default([]),
  any: z.array(conditionSchema).optional(),
});
export type Predicate = z.infer<typeof predicateSchema>;

/** What a rule's window counts back from. Each falls back to the charge (see `anchorInstant`). */
export const ruleAnchors = ['charge', 'cancellation_deadline', 'trial_end', 'price_change'] as const;
export type RuleAnchor = (typeof ruleAnchors)[number];

/**
 * "At least `min` and at most `max` units before the anchor". Days and months are calendar
 * units in the recipient's time zone, hours are exact. A bound left out does not limit.
 */
export const ruleWindowSchema = z
  .strictObject({
    unit: z.enum(['hours', 'days', 'months']),
    min: z.number().int().min(0).max(10_000).optional(),
    max: z.number().int().min(0).max(10_000).optional(),
  })
  .refine((window) => window.min === undefined || window.max === undefined || window.min <= window.max, { message: 'min must not exceed max', path: ['min'] });
export type RuleWindow = z.infer<typeof ruleWindowSchema>;

/**
 * What a required notice is for. `billing_reminder` is a card network's reminder before a recurring
 * charge (Mastercard AN 4934), a notice of its own: its 3–7 days cannot share a message with a
 * state's renewal notice 15–45 days out.
 */
export const obligations = ['auto_renewal_notice', 'trial_conversion_notice', 'price_change_notice', 'pre_debit_notice', 'billing_reminder'] as const;
export type Obligation = (typeof obligations)[number];

export const ruleSchema = z.strictObject({
  id: z.string().regex(/^[A-Za-z0-9*][A-Za-z0-9_.:/*-]{0,99}$/, 'must be a short id such as US-CA/arl-annual'),
  version: z.number().int().min(1),
  title: z.string().min(1).max(200),
  jurisdiction: jurisdictionSchema,
  obligation: z.enum(obligations),
  appliesWhen: predicateSchema.default({ all: [] }),
  anchor: z.enum(ruleAnchors),
  window: ruleWindowSchema,
  /** What the notice itself must carry or be, e.g. `online_cancel_link`, `dedicated_message`. */
  requirements: z.array(z.string().min(1).max(100)).default([]),
  /** Whose duty the law makes it; `issuer` for India's pre-debit notice, recorded, not enforced. */
  dutyHolder: z.enum(['merchant', 'issuer']),
  sourceUrl: z.url(),
  checkedAt: z.iso.date(),
  /** What could not be confirmed from a source when the rule was written. */
  unconfirmed: z.array(z.string().min(1)).default([]),
  enabled: z.boolean().default(true),
});
export type Rule = z.infer<typeof ruleSchema>;

/** A numeric fact; the billing interval is the term's when the producer does not send one. */
function contractNumber(field: NumericField, contract: Contract): number | undefined {
  return field === 'billingIntervalMonths' ? (contract.billingIntervalMonths ?? contract.termMonths) : contract[field];
}

function holds(condition: Condition, contract: Contract): boolean {
  if (condition.op === 'present') {
    const { field } = condition;
    return (field === 'billingIntervalMonths' ? contractNumber(field, contract) : contract[field]) !== undefined;
  }
  if (condition.op === 'in') return contract.paymentNetwork !== undefined && condition.value.includes(contract.paymentNetwork);
  const actual = contractNumber(condition.field, contract);
  if (actual === undefined) return false;
  switch (condition.op) {
    case 'gte':
      return actual >= condition.value;
    case 'gt':
      return actual > condition.value;
    case 'lte':
      return actual <= condition.value;
    case 'lt':
      return actual < condition.value;
    case 'eq':
      return actual === condition.value;
  }
}

export function predicateHolds(predicate: Predicate, contract: Contract): boolean {
  if (!predicate.all.every((condition) => holds(condition, contract))) return false;
  return predicate.any === undefined || predicate.any.some((condition) => holds(condition, contract));
}

/** `US` covers `US-CA`; `US-CA` covers only itself; `*` covers every region. */
export function jurisdictionCovers(jurisdiction: string, region: string): boolean {
  return jurisdiction === '*' || region === jurisdiction || region.startsWith(`${jurisdiction}-`);
}

/** The rules that bind one notice obligation for this recipient and contract. */
export function applicableRules({
  rules,
  obligation,
  region,
  contract,
}: {
  rules: readonly Rule[];
  obligation: Obligation;
  region: string;
  contract: Contract;
}): Rule[] {
  return rules.filter(
    (rule) => rule.enabled && rule.obligation === obligation && jurisdictionCovers(rule.jurisdiction, region) && predicateHolds(rule.appliesWhen, contract),
  );
}

/**
 * The instant a rule counts from. A producer that knows a separate cancellation deadline,
 * trial end or price-change date sends it; without one the charge is taken, which is right
 * for the common online subscription that can be cancelled until it renews — and wrong for a
 * contract whose deadline is earlier, so producers of such contracts must send it.
 */
export function anchorInstant(anchor: RuleAnchor, chargeAt: Date, contract: Contract): Date {
  const text =
    anchor === 'cancellation_deadline'
      ? contract.cancellationDeadlineAt
      : anchor === 'trial_end'
        ? contract.trialEndsAt
        : anchor === 'price_change'
          ? contract.priceChange?.effectiveAt
          : undefined;
  return text === undefined ? chargeAt : new Date(text);
}

export function ruleRef(rule: Rule): string {
  return `${rule.id}@${rule.version}`;
}
