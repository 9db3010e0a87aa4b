import { revisionSchema } from '@/lib/api/fields';
import { activeNoticeConfig } from './active';
import { identitySchemaFor } from './identity';
import type { NoticeConfig } from './load-config';

/**
 * One notice as a business fact: a configured notice type, the identity fields that make it one
 * fact, and a revision. Nothing that changes on a replay (message id, attempt, scheduled time,
 * batch, host) is part of it. The operator's configuration (NOTICE_CONFIG) is the only registry
 * of types: the producer API, replays, backfills and the console all validate against it.
 */
export type NoticeIdentity = Record<string, string>;

export type NoticeFact = {
  type: string;
  identity: NoticeIdentity;
  revision: number;
};

export class InvalidNoticeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidNoticeError';
  }
}

/** Whether `name` is a configured notice type (own names only: `constructor` is not one). */
export function isNoticeType(name: string, config: NoticeConfig = activeNoticeConfig().config): boolean {
  return Object.hasOwn(config.noticeTypes, name);
}

/** The refusal for a name that is not a configured notice type, listing the configured ones. */
export function unknownNoticeTypeMessage(name: string, config: NoticeConfig = activeNoticeConfig().config): string {
  return `unknown notice type "${String(name).slice(0, 64)}"; known: ${Object.keys(config.noticeTypes).join(', ')}`;
}

/** A configured type's identity fields in key order, or [] for a type that is not configured. */
export function identityFieldsOf(type: string, config: NoticeConfig = activeNoticeConfig().config): string[] {
  return isNoticeType(type, config) ? [...(config.noticeTypes[type]?.identity ?? [])] : [];
}

/** Every identity field any configured type uses, each once, in configuration order. */
export function allIdentityFields(config: NoticeConfig = activeNoticeConfig().config): string[] {
  return [...new Set(Object.values(config.noticeTypes).flatMap((type) => type.identity))];
}

/** Validates a fact against its configured type's identity; returns the normalised fact. */
export function parseNoticeFact(
  input: { type: string; identity: unknown; revision?: unknown },
  config: NoticeConfig = activeNoticeConfig().config,
): NoticeFact {
  const schema = identitySchemaFor(config, String(input.type));
  if (!schema) throw new InvalidNoticeError(unknownNoticeTypeMessage(input.type, config));
  const identity = schema.safeParse(input.identity);
  if (!identity.success) {
    const issues = identity.error.issues.map((issue) => `${issue.path.join('.') || 'identity'}: ${issue.message}`).join('; ');
    throw new InvalidNoticeError(`invalid identity for ${input.type}: ${issues}`);
  }
  const revision = revisionSchema.safeParse(input.revision ?? 0);
  if (!revision.success) throw new InvalidNoticeError('revision must be a whole number from 0 to 1000000');
  return { type: input.type, identity: identity.data as NoticeIdentity, revision: revision.data };
}

/** The identity value support searches by: the subject field of the type's event (subscription_id, account_id). */
export function subjectOf(fact: NoticeFact, config: NoticeConfig = activeNoticeConfig().config): string {
  const type = isNoticeType(fact.type, config) ? config.noticeTypes[fact.type] : undefined;
  const field = type ? config.eventTypes[type.event]?.subjectField : undefined;
  return field === undefined ? '' : (fact.identity[field] ?? '');
}
