/**
 * The evidence reference a notice cites when its producer named none: its event type's
 * `evidenceRef` template (`recon:{exception_id}`) filled from the notice's identity. The same for
 * every door (POST /api/v1/reminders, POST /api/v1/events, a replay upload), so resolving one
 * reconciliation exception suppresses its notices however they were scheduled. Identity values
 * are ids or ISO dates, whose characters an evidence reference allows.
 */

/** What forming a reference reads of the notice configuration (a NoticeConfig, ./load-config.ts, which checks its templates with evidenceRefFields). */
export type EvidenceRefConfig = {
  noticeTypes: Record<string, { event: string }>;
  eventTypes: Record<string, { evidenceRef?: string | undefined }>;
};

const placeholder = /\{([a-z][a-z0-9_]{0,63})\}/g;

/** The identity fields a template names, in order. */
export function evidenceRefFields(template: string): string[] {
  return [...template.matchAll(placeholder)].map((match) => match[1] ?? '');
}

/** The filled reference, or null when the type's event declares none (or a field is missing). */
export function derivedEvidenceRef(config: EvidenceRefConfig, noticeType: string, identity: Record<string, string>): string | null {
  const type = Object.hasOwn(config.noticeTypes, noticeType) ? config.noticeTypes[noticeType] : undefined;
  const event = type && Object.hasOwn(config.eventTypes, type.event) ? config.eventTypes[type.event] : undefined;
  return event?.evidenceRef ? fillEvidenceRef(event.evidenceRef, identity) : null;
}

export function fillEvidenceRef(template: string, identity: Record<string, string>): string | null {
  let missing = false;
  const filled = template.replace(placeholder, (_, field: string) => {
    const value = Object.hasOwn(identity, field) ? identity[field] : undefined;
    if (value === undefined || value === '') missing = true;
    return value ?? '';
  });
  return missing ? null : filled;
}

/** An evidence reference is at most 200 characters (the evidence routes' `{ref}`): a longer formed one could never be resolved. */
export function evidenceRefProblem(ref: string | null): string | null {
  if (ref === null || ref.length <= 200) return null;
  return `evidenceRef: the reference formed from the identity is ${ref.length} characters; at most 200, or it could never be resolved`;
}
