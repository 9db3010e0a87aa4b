import type { DbOrTx } from '@/db/client';
import { findNoticeKeysByPrefix } from '@/db/queries/recipient-notice';
import type { LinkVerdict } from './link';
import { recipientPageExpiry } from './page-link';
import { unsubscribeExpiry } from './unsubscribe';

type VerifiedLink = Extract<LinkVerdict, { ok: true }>;

/**
 * The notice a verified link names: a v1 link names its whole key; a compact one a prefix,
 * which counts only when exactly one notice has it (two is a refusal, never a guess). null:
 * no such notice (the caller answers 404).
 */
export async function findLinkedNoticeKey(db: DbOrTx, verdict: VerifiedLink): Promise<string | null> {
  if ('noticeKey' in verdict) return verdict.noticeKey;
  const keys = await findNoticeKeysByPrefix(db, { prefix: verdict.noticePrefix });
  return keys.length === 1 ? (keys[0] ?? null) : null;
}

/** When a compact link of this purpose stops working, from its notice: the page at the anchor or the deadline, unsubscribing a year after the window. */
export function linkExpiry({ purpose, anchorAt, deadlineAt }: { purpose: VerifiedLink['purpose']; anchorAt: Date | null; deadlineAt: Date }): Date {
  return purpose === 'page' ? recipientPageExpiry({ anchorAt, deadlineAt }) : unsubscribeExpiry({ deadlineAt });
}

/** A v1 link carried its expiry and was checked by verifyRecipientToken; a compact one is checked here, against its notice. */
export function hasLinkExpired(verdict: VerifiedLink, notice: { anchorAt: Date | null; deadlineAt: Date }, now: Date): boolean {
  if ('noticeKey' in verdict) return false;
  return now.getTime() >= linkExpiry({ purpose: verdict.purpose, ...notice }).getTime();
}
