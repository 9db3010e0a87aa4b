import { z } from 'zod';
import type { NoticeConfig } from './load-config';

/**
 * A configured notice type's identity, validated as the ledger's registry validates the original
 * types (lib/ledger/notice-types.ts): the same value rules, the type's fields only, nothing else.
 * The event type says whether a field is an `id` or an ISO `date`.
 */
const id = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\p{L}\p{N}_.:@/+-]+$/u, 'may contain letters, digits and _ . : @ / + - only');

const kinds = { id, date: z.iso.date() } as const;

export type IdentityResult = { ok: true; identity: Record<string, string> } | { ok: false; problems: string[] };

export function parseIdentity(config: NoticeConfig, noticeType: string, input: unknown): IdentityResult {
  // Own names only: `constructor` or `__proto__` is not a notice type.
  const type = Object.hasOwn(config.noticeTypes, noticeType) ? config.noticeTypes[noticeType] : undefined;
  if (!type) return { ok: false, problems: [`unknown notice type "${noticeType.slice(0, 64)}"; known: ${Object.keys(config.noticeTypes).join(', ')}`] };
  const event = config.eventTypes[type.event];
  const shape = Object.fromEntries(type.identity.map((field) => [field, kinds[event?.identity[field] ?? 'id']]));
  const parsed = z.strictObject(shape).safeParse(input);
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
