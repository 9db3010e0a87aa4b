import type { ParsedNoticeConfig } from '@/lib/windows/config-schema';
import type { Rule } from '@/lib/windows/rules';
import { layoutMeets, payloadProblems, type TemplateDefinition, type TemplatesSection } from './schema';

/** The configuration's `templates` section as the process holds it: `directory` is absolute. */
export type TemplatesConfig = TemplatesSection;

/**
 * What the section's schema cannot see field by field: every notice type's template is defined,
 * every sample payload satisfies its declarations, and a required type's wording meets every
 * requirement the rules for its obligation list (the layout meets `online_cancel_link`).
 * The files themselves are parsed by `loadTemplates` (`load.ts`).
 */
export function templateConfigProblems(config: ParsedNoticeConfig, rules: readonly Rule[]): string[] {
  const section = config.templates;
  if (!section) return [];
  const problems: string[] = [];
  for (const [name, type] of Object.entries(config.noticeTypes)) {
    const definition = Object.hasOwn(section.definitions, type.template) ? section.definitions[type.template] : undefined;
    if (!definition) {
      problems.push(`noticeTypes.${name}.template: "${type.template}" is not defined in templates.definitions`);
      continue;
    }
    if (type.category !== 'required' || type.obligation === null) continue;
    const required = new Set(rules.filter((rule) => rule.enabled && rule.obligation === type.obligation).flatMap((rule) => rule.requirements));
    const met = new Set<string>([...layoutMeets, ...definition.meets]);
    const missing = [...required].filter((requirement) => !met.has(requirement)).sort();
    if (missing.length > 0)
      problems.push(
        `templates.definitions.${type.template}.meets: the rules for ${type.obligation} require ${missing.join(', ')}, which the template does not say it meets`,
      );
  }
  for (const [id, definition] of Object.entries(section.definitions)) {
    for (const problem of payloadProblems(definition, definition.sample, `templates.definitions.${id}.sample`)) problems.push(problem);
  }
  return problems;
}

/** The definition a notice type renders with, or null (no templates section, or a type no longer configured). */
export function definitionFor(templates: TemplatesConfig | null, templateId: string): TemplateDefinition | null {
  if (!templates || !Object.hasOwn(templates.definitions, templateId)) return null;
  return templates.definitions[templateId] ?? null;
}

/** The sample payload a notice type's template declares (the console, the demo and the tests render with it); {} when none. */
export function samplePayloadFor(
  templates: TemplatesConfig | null,
  noticeTypes: Record<string, { template: string }>,
  noticeType: string,
): Record<string, unknown> {
  const type = Object.hasOwn(noticeTypes, noticeType) ? noticeTypes[noticeType] : undefined;
  const definition = type ? definitionFor(templates, type.template) : null;
  return definition ? { ...definition.sample } : {};
}
