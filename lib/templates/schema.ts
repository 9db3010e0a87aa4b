import { z } from 'zod';
import { localeSchema } from '@/lib/api/fields';

/**
 * The `templates` section of the operator's notice configuration: where the template files are,
 * the locale every template must have, and per template id (a notice type's `template`) the
 * variables it takes from the producer's payload, each with a type, and a sample payload the
 * console renders it with. A payload is checked against these declarations at the front door
 * (`POST /api/v1/events`, `/reminders`), so a notice never renders with a missing value.
 */

export const variableTypes = ['string', 'decimal', 'currency', 'date', 'integer'] as const;
export type VariableType = (typeof variableTypes)[number];

const supportedCurrencies = new Set(Intl.supportedValuesOf('currency'));

function isCalendarDate(text: string): boolean {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(text);
  if (!match) return false;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  return date.toISOString().slice(0, 10) === text;
}

const valueSchemas = new Map<VariableType, z.ZodType>();

/**
 * The zod schema of one declared variable's value in a payload, built once per type: building a
 * zod schema costs far more than parsing with it, and a replay upload checks every row's payload.
 */
export function valueSchema(type: VariableType): z.ZodType {
  let schema = valueSchemas.get(type);
  if (!schema) {
    schema = buildValueSchema(type);
    valueSchemas.set(type, schema);
  }
  return schema;
}

function buildValueSchema(type: VariableType): z.ZodType {
  switch (type) {
    case 'string':
      return z.string('must be a string').trim().min(1, 'must not be empty').max(200, 'must be at most 200 characters');
    case 'decimal':
      return z.string('must be a decimal string such as "49.00"').regex(/^-?\d{1,12}(\.\d{1,4})?$/, 'must be a decimal string such as "49.00"');
    case 'currency':
      return z
        .string('must be an ISO 4217 currency code such as EUR')
        .refine((code) => supportedCurrencies.has(code), 'must be an ISO 4217 currency code such as EUR (upper case)');
    case 'date':
      return z.string('must be an ISO date such as 2026-10-01').refine(isCalendarDate, 'must be an ISO date such as 2026-10-01');
    case 'integer':
      return z.number('must be a whole number').int('must be a whole number').min(-1e12).max(1e12);
  }
}

const variableName = z.string().regex(/^[a-z][a-z0-9_]{0,63}$/, 'must be a lower-case variable name');

export const templateDefinitionSchema = z.strictObject({
  /** Variables from the payload, each with its type; every one is required. */
  variables: z.record(variableName, z.enum(variableTypes)),
  /** A payload the console renders this template with (checked against `variables`). */
  sample: z.record(z.string(), z.unknown()),
  /**
   * What the wording itself fulfils of the rules' `requirements` (`how_to_cancel`,
   * `renewal_terms`…). `online_cancel_link` and `electronic` are the layout's: every email
   * carries the manage link.
   */
  meets: z.array(z.string().min(1).max(100)).default([]),
});

export const templatesSectionSchema = z.strictObject({
  /** The template files, relative to the configuration file: `<directory>/<template>/<channel>.<locale>…`. */
  directory: z.string().min(1).max(200).default('templates'),
  /** The locale every template has, used when the recipient's has none. */
  fallbackLocale: localeSchema.default('en'),
  definitions: z.record(z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,99}$/, 'must be a template id such as renewal_notice_t72'), templateDefinitionSchema),
});

export type TemplateDefinition = z.infer<typeof templateDefinitionSchema>;
export type TemplatesSection = z.infer<typeof templatesSectionSchema>;

/** The product's own variables, in every template beside the declared ones. */
export const builtInVariables = ['anchor_at', 'window_closes_at', 'code', 'links', 'recipient', 'category', 'cancellable', 'notice_type', 'merchant'] as const;

/** The layout's requirements: every email carries the manage (cancel online) link, and is electronic. */
export const layoutMeets = ['online_cancel_link', 'electronic'] as const;

/** Checks a payload against a template's declared variables; each problem names its field (`payload.amount: …`). */
export function payloadProblems(definition: TemplateDefinition, payload: Record<string, unknown>, at = 'payload'): string[] {
  const problems: string[] = [];
  for (const [name, type] of Object.entries(definition.variables)) {
    if (!Object.hasOwn(payload, name) || payload[name] === undefined || payload[name] === null) {
      problems.push(`${at}.${name}: is required (${type})`);
      continue;
    }
    const parsed = valueSchema(type).safeParse(payload[name]);
    if (!parsed.success) problems.push(`${at}.${name}: ${parsed.error.issues[0]?.message ?? `must be a ${type}`}`);
  }
  return problems;
}
