import { z } from 'zod';

/**
 * The registry of notice types. Each type names the identity fields that make one notice
 * one business fact. Nothing that changes on a replay (message id, attempt, scheduled
 * time, batch, host) may appear here.
 */

const id = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[\p{L}\p{N}_.:@/+-]+$/u, 'may contain letters, digits and _ . : @ / + - only');

const isoDate = z.iso.date();

export const noticeTypes = {
  renewal_notice_t72: {
    label: 'Renewal notice (72 h before charge)',
    subjectField: 'subscription_id',
    identity: z.strictObject({ subscription_id: id, period_start: isoDate }),
  },
  renewal_notice_t24: {
    label: 'Renewal notice (24 h before charge)',
    subjectField: 'subscription_id',
    identity: z.strictObject({ subscription_id: id, period_start: isoDate }),
  },
  payment_recovery: {
    label: 'Payment recovery follow-up',
    subjectField: 'account_id',
    identity: z.strictObject({ account_id: id, reconciliation_id: id, exception_id: id }),
  },
} as const;

export type NoticeType = keyof typeof noticeTypes;
export const noticeTypeNames = Object.keys(noticeTypes) as NoticeType[];
export const noticeTypeSchema = z.enum(noticeTypeNames as [NoticeType, ...NoticeType[]]);

export type NoticeIdentity = Record<string, string>;

export type NoticeFact = {
  type: NoticeType;
  identity: NoticeIdentity;
  revision: number;
};

export const revisionSchema = z.number().int().min(0).max(1_000_000);

export class InvalidNoticeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidNoticeError';
  }
}

/** Validates a fact against its type's identity schema; returns the normalised fact. */
export function parseNoticeFact(input: { type: string; identity: unknown; revision?: unknown }): NoticeFact {
  const type = noticeTypeSchema.safeParse(input.type);
  if (!type.success) throw new InvalidNoticeError(`unknown notice type "${String(input.type).slice(0, 64)}"; known: ${noticeTypeNames.join(', ')}`);
  const identity = noticeTypes[type.data].identity.safeParse(input.identity);
  if (!identity.success) {
    const issues = identity.error.issues.map((issue) => `${issue.path.join('.') || 'identity'}: ${issue.message}`).join('; ');
    throw new InvalidNoticeError(`invalid identity for ${type.data}: ${issues}`);
  }
  const revision = revisionSchema.safeParse(input.revision ?? 0);
  if (!revision.success) throw new InvalidNoticeError('revision must be a whole number from 0 to 1000000');
  return { type: type.data, identity: identity.data as NoticeIdentity, revision: revision.data };
}

/** The identity value support searches by (subscription_id or account_id). */
export function subjectOf(fact: NoticeFact): string {
  return fact.identity[noticeTypes[fact.type].subjectField] ?? '';
}
