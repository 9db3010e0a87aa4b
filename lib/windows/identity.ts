import { z } from 'zod';
import type { Invalid } from '@/lib/result';
import type { NoticeConfig } from './load-config';

/**
 * A configured notice type's identity: the type's fields only, nothing else, each an `id` (the
 * value rules below) or an ISO `date`, as its event type says. The three original types keep the
 * rules their code registry had (identity.test.ts pins the accepted and refused values).
 */
const id = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\p{L}\p{N}_.:@/+-]+$/u, 'may contain letters, digits and _ . : @ / + - only');

const kinds = { id, date: z.iso.date() } as const;

export type IdentityResult = { ok: true; identity: Record<string, string> } | Invalid;

const identitySchemas = new WeakMap<NoticeConfig, Map<string, z.ZodType<Record<string, string>>>>();

/**
 * The strict schema of a configured type's identity, or null for a name that is not configured.
 * Built once per configuration and type: building a zod object schema costs ~10× parsing with it,
 * and a replay upload parses every row's identity (bench/replay-dry-run.ts).
 */
export function identitySchemaFor(config: NoticeConfig, noticeType: string): z.ZodType<Record<string, string>> | null {
  // Own names only: `constructor` or `__proto__` is not a notice type.
  const type = Object.hasOwn(config.noticeTypes, noticeType) ? config.noticeTypes[noticeType] : undefined;
  if (!type) return null;
  let known = identitySchemas.get(config);
  if (!known) {
    known = new Map();
    identitySchemas.set(config, known);
  }
  let schema = known.get(noticeType);
  if (!schema) {
    const event = config.eventTypes[type.event];
    schema = z.strictObject(Object.fromEntries(type.identity.map((field) => [field, kinds[event?.identity[field] ?? 'id']])));
    known.set(noticeType, schema);
  }
  return schema;
}

export function parseIdentity(config: NoticeConfig, noticeType: string, input: unknown): IdentityResult {
  const schema = identitySchemaFor(config, noticeType);
  if (!schema) return { ok: false, problems: [`unknown notice type "${noticeType.slice(0, 64)}"; known: ${Object.keys(config.noticeTypes).join(', ')}`] };
  const parsed = schema.safeParse(input);
  if (parsed.success) return { ok: true, identity: parsed.data as Record<string, string> };
  return { ok: false, problems: parsed.error.issues.map((issue) => `identity.${issue.path.join('.') || '(object)'}: ${issue.message}`) };
}

/** A business event's identity: exactly its event type's fields, each an `id` or an ISO `date`. */
export function parseEventIdentity(config: NoticeConfig, eventType: string, input: unknown): IdentityResult {
  const event = Object.hasOwn(config.eventTypes, eventType) ? config.eventTypes[eventType] : undefined;
  if (!event) return { ok: false, problems: [`type: unknown event type "${eventType.slice(0, 64)}"; known: ${Object.keys(config.eventTypes).join(', ')}`] };
  const shape = Object.fromEntries(Object.entries(event.identity).map(([field, kind]) => [field, kinds[kind]]));
  const parsed = z.strictObject(shape).safeParse(input);
  if (parsed.success) return { ok: true, identity: parsed.data as Record<string, string> };
  return { ok: false, problems: parsed.error.issues.map((issue) => `identity.${issue.path.join('.') || '(object)'}: ${issue.message}`) };
}
