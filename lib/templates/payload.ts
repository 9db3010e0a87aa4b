import type { NoticeConfig } from '@/lib/windows/load-config';
import { definitionFor } from './config';
import { templatesOf } from './load';
import { payloadProblems } from './schema';

/**
 * The front door's check (`POST /api/v1/reminders`, `/events`): the payload of a notice of this
 * type carries every variable its template declares, each of its declared type, and a template
 * that shows the charge date has an anchor to show. Each problem names its field
 * (`payload.amount: must be a decimal string such as "49.00"`), so a notice is refused with a
 * 422 when it is scheduled rather than rendered with a fallback when it is sent. A configuration
 * without a templates section checks nothing (its notices cannot render either).
 */
export function noticePayloadProblems(
  config: NoticeConfig,
  noticeType: string,
  payload: Record<string, unknown>,
  { hasAnchor }: { hasAnchor: boolean },
): string[] {
  const type = Object.hasOwn(config.noticeTypes, noticeType) ? config.noticeTypes[noticeType] : undefined;
  if (!type || !config.templates) return [];
  const definition = definitionFor(config.templates, type.template);
  if (!definition) return [`type: notice type ${noticeType} has no template definition "${type.template}"`];
  const problems = payloadProblems(definition, payload);
  if (!hasAnchor && templatesOf(config).entries.get(type.template)?.usesAnchor)
    problems.push(`anchorAt: is required for ${noticeType}: its template shows the date the notice is about (the charge)`);
  return problems;
}

/** The field a problem names: `payload.amount: …` → `payload.amount`. */
export function fieldOf(problem: string): string {
  return problem.split(':')[0] ?? '';
}
