import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { templateConfigProblems, type TemplatesConfig } from '@/lib/templates/config';
import type { Channel } from '@/db/schema/states';
import { parseQuietHours, type QuietWindow } from './quiet-hours';
import {
  cancelRedirectFields,
  noticeConfigSchema,
  type EventTypeConfig,
  type MerchantWindow,
  type NoticeTypeConfig,
  type ParsedNoticeConfig,
  type RuleSwitch,
} from './config-schema';
import { defaultRules } from './default-rules';
import { evidenceRefFields } from './evidence-ref';
import { ruleSchema, type Rule } from './rules';

export type NoticeType = Omit<NoticeTypeConfig, 'window' | 'quietHours' | 'emailWhenSmsRefused'> & {
  name: string;
  window: MerchantWindow | null;
  /**
   * Resolved, for the planner and the send path alike: the type's own window, else the
   * configuration's, else the process's QUIET_HOURS (backwards compatibility); `off` is none.
   */
  quietHours: QuietWindow | null;
  /** `channel`, then `fallbackChannel` when set: the channels the type uses, in order of preference. */
  channels: Channel[];
  /** Resolved: the file's setting, else on for a required type (lib/jobs/sms-fallback.ts). */
  emailWhenSmsRefused: boolean;
};

export type NoticeConfig = {
  file: string;
  eventTypes: Record<string, EventTypeConfig>;
  noticeTypes: Record<string, NoticeType>;
  /** The configuration's quiet hours, else QUIET_HOURS: what a type no longer configured keeps at send. */
  quietHours: QuietWindow | null;
  /** The `templates` section with its directory resolved against the file; null when the file has none (lib/templates). */
  templates: TemplatesConfig | null;
};

/** What the process adds to the file: QUIET_HOURS, the quiet hours of a type and a file that set none. */
export type ConfigDefaults = { fallbackQuietHours?: QuietWindow | null };

/** The effective rules and a version that names exactly them, recorded with every plan. */
export type RuleSet = { version: string; rules: Rule[] };

export class NoticeConfigError extends Error {
  constructor(
    readonly file: string,
    readonly problems: string[],
  ) {
    super(`Invalid notice configuration in ${file}:\n${problems.map((problem) => `  - ${problem}`).join('\n')}`);
    this.name = 'NoticeConfigError';
  }
}

/** Reads and validates the operator's file; every problem names its field path and the file. */
export function loadNoticeConfig(file: string, defaults: ConfigDefaults = {}): { config: NoticeConfig; ruleSet: RuleSet } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new NoticeConfigError(file, [`cannot be read: ${(error as Error).message}`]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new NoticeConfigError(file, [`is not JSON: ${(error as Error).message}`]);
  }
  return parseNoticeConfig(json, file, defaults);
}

export function parseNoticeConfig(json: unknown, file: string, defaults: ConfigDefaults = {}): { config: NoticeConfig; ruleSet: RuleSet } {
  const parsed = noticeConfigSchema.safeParse(json);
  if (!parsed.success)
    throw new NoticeConfigError(
      file,
      parsed.error.issues.map((issue) => `${issue.path.join('.') || '(file)'}: ${issue.message}`),
    );
  const problems = crossFieldProblems(parsed.data);
  const ruleSet = effectiveRules(parsed.data.rules, problems);
  problems.push(...templateConfigProblems(parsed.data, ruleSet.rules));
  if (problems.length > 0) throw new NoticeConfigError(file, problems);
  return { config: resolveConfig(parsed.data, file, defaults.fallbackQuietHours ?? null), ruleSet };
}

/** What zod cannot see field by field: references between the sections. */
function crossFieldProblems(config: ParsedNoticeConfig): string[] {
  const problems: string[] = [];
  for (const [name, event] of Object.entries(config.eventTypes)) {
    if (!(event.subjectField in event.identity)) problems.push(`eventTypes.${name}.subjectField: "${event.subjectField}" is not one of its identity fields`);
    if (event.customerField !== undefined && !(event.customerField in event.identity))
      problems.push(`eventTypes.${name}.customerField: "${event.customerField}" is not one of its identity fields`);
    problems.push(...evidenceRefProblems(config, name, event));
  }
  for (const [name, type] of Object.entries(config.noticeTypes)) {
    const at = `noticeTypes.${name}`;
    const event = config.eventTypes[type.event];
    if (!event) problems.push(`${at}.event: "${type.event}" is not a configured event type (${Object.keys(config.eventTypes).join(', ')})`);
    type.identity.forEach((field, index) => {
      if (event && !(field in event.identity)) problems.push(`${at}.identity.${index}: "${field}" is not an identity field of ${type.event}`);
    });
    if (new Set(type.identity).size !== type.identity.length) problems.push(`${at}.identity: lists a field twice`);
    if (type.category === 'courtesy' && !type.window) problems.push(`${at}.window: a courtesy notice needs a merchant window`);
    if (type.category === 'courtesy' && type.obligation !== null)
      problems.push(`${at}.obligation: a courtesy notice fulfils no legal obligation (category required?)`);
    if (type.category === 'courtesy' && type.emailWhenSmsRefused === true)
      problems.push(`${at}.emailWhenSmsRefused: a courtesy text never falls back to email (the recipient's STOP stands)`);
    if (type.category === 'required' && type.obligation === null) problems.push(`${at}.obligation: a required notice must name the obligation it fulfils`);
    for (const field of cancelRedirectFields(type.cancel?.redirect ?? '')) {
      if (field !== 'customer_id' && !type.identity.includes(field))
        problems.push(`${at}.cancel.redirect: {${field}} is not one of its identity fields (${type.identity.join(', ')}) or customer_id`);
    }
  }
  return problems;
}

/** Every placeholder of an event's evidenceRef must be filled by each of its notice types' identity. */
function evidenceRefProblems(config: ParsedNoticeConfig, name: string, event: EventTypeConfig): string[] {
  if (!event.evidenceRef) return [];
  const at = `eventTypes.${name}.evidenceRef`;
  const fields = evidenceRefFields(event.evidenceRef);
  if (fields.length === 0) return [`${at}: names no identity field, so every event would cite one evidence reference (use {field})`];
  const problems = fields.filter((field) => !(field in event.identity)).map((field) => `${at}: {${field}} is not one of its identity fields`);
  for (const [typeName, type] of Object.entries(config.noticeTypes)) {
    if (type.event !== name) continue;
    for (const field of fields.filter((candidate) => candidate in event.identity && !type.identity.includes(candidate)))
      problems.push(`${at}: {${field}} is not in noticeTypes.${typeName}.identity, so its notices could not cite the evidence`);
  }
  return problems;
}

/**
 * Shipped rules, then the operator's entries in order: a known id is replaced (or switched off),
 * a new one is added. The version is a digest of the result, so two processes that plan with
 * the same rules record the same version and any edit — ours or the operator's — changes it.
 */
function effectiveRules(entries: readonly (RuleSwitch | Rule)[], problems: string[]): RuleSet {
  const rules = new Map<string, Rule>(defaultRules.map((input) => [input.id, ruleSchema.parse(input)]));
  const seen = new Set<string>();
  entries.forEach((entry, index) => {
    if (seen.has(entry.id)) problems.push(`rules.${index}.id: "${entry.id}" appears twice in the file`);
    seen.add(entry.id);
    if ('version' in entry) rules.set(entry.id, entry);
    else {
      const known = rules.get(entry.id);
      if (known) rules.set(entry.id, { ...known, enabled: false });
      else problems.push(`rules.${index}.id: "${entry.id}" is not a known rule, so it cannot be switched off`);
    }
  });
  const list = [...rules.values()].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
  const digest = createHash('sha256').update(JSON.stringify(list), 'utf8').digest('hex');
  return { version: `rules-${digest.slice(0, 12)}`, rules: list };
}

function resolveConfig(config: ParsedNoticeConfig, file: string, fallbackQuietHours: QuietWindow | null): NoticeConfig {
  const fallback = config.quietHours === null ? fallbackQuietHours : parseQuietHours(config.quietHours);
  const noticeTypes: Record<string, NoticeType> = {};
  for (const [name, type] of Object.entries(config.noticeTypes)) {
    const quietHours = type.quietHours === 'inherit' ? fallback : type.quietHours === 'off' ? null : parseQuietHours(type.quietHours);
    const channels: Channel[] = type.fallbackChannel ? [type.channel, type.fallbackChannel] : [type.channel];
    const emailWhenSmsRefused = type.emailWhenSmsRefused ?? type.category === 'required';
    noticeTypes[name] = { ...type, name, window: type.window ?? null, quietHours, channels, emailWhenSmsRefused };
  }
  const templates = config.templates ? { ...config.templates, directory: resolve(dirname(file), config.templates.directory) } : null;
  return { file, eventTypes: config.eventTypes, noticeTypes, quietHours: fallback, templates };
}

/** Which enabled notice types an event type triggers, in configuration order. */
export function noticeTypesFor(config: NoticeConfig, eventType: string): NoticeType[] {
  return Object.values(config.noticeTypes).filter((type) => type.enabled && type.event === eventType);
}
