import { createHash, randomBytes } from 'node:crypto';
import type { DbOrTx } from '@/db/client';
import { businessEvents, noticeLedger, type JobRow } from '@/db/schema';
import { signCompactToken, signRecipientToken, type LinkPurpose } from '@/lib/recipient/link';
import { defaultLinkKeyRing } from '@/lib/recipient/link-keys';
import type { NoticeFact } from '@/lib/windows/notice-fact';
import { insertTestJob } from './jobs';

const HOUR = 3_600_000;

export type SentTestNotice = { job: JobRow; code: string; anchorAt: Date; fact: NoticeFact };

/**
 * A notice as the recipient holds it (tests only): the business event with its anchor (the
 * charge) and recipient, the job it planned, and a `sent` ledger row with its one-time code.
 */
export async function insertSentNotice(
  db: DbOrTx,
  {
    type = 'renewal_notice_t72',
    anchorAt = new Date(Date.now() + 48 * HOUR),
    phone,
    timeZone = 'Europe/Berlin',
    code = 'ABCDEFGH23',
    category,
    withLedger = true,
  }: { type?: string; anchorAt?: Date; phone?: string; timeZone?: string; code?: string; category?: 'courtesy' | 'required'; withLedger?: boolean } = {},
): Promise<SentTestNotice> {
  const suffix = randomBytes(5).toString('hex');
  const recovery = type === 'payment_recovery';
  const identity: Record<string, string> = recovery
    ? { account_id: `acct_${suffix}`, reconciliation_id: 'rec_test', exception_id: `exc_${suffix}` }
    : { subscription_id: `sub_${suffix}`, period_start: anchorAt.toISOString().slice(0, 10) };
  const fact: NoticeFact = { type, identity, revision: 0 };
  const [event] = await db
    .insert(businessEvents)
    .values({
      type: recovery ? 'reconciliation.exception' : 'subscription.renewal',
      identity,
      revision: 0,
      bodySha256: createHash('sha256').update(randomBytes(8)).digest('hex'),
      anchorAt,
      region: 'DE',
      timeZone,
      recipient: { email: 'customer@example.test', ...(phone ? { phone } : {}) },
      payload: {},
      ruleSetVersion: 'rules-test',
      source: 'test',
    })
    .returning({ id: businessEvents.id });
  const job = await insertTestJob(db, {
    fact,
    eventId: event?.id ?? null,
    recipientTimeZone: timeZone,
    recipientEmail: `customer_${randomBytes(3).toString('hex')}@example.test`,
    deadlineAt: new Date(anchorAt.getTime() - 24 * HOUR),
    windowEarliest: new Date(anchorAt.getTime() - 72 * HOUR),
    dueAt: new Date(anchorAt.getTime() - 72 * HOUR),
    category: category ?? (type.startsWith('renewal_notice') || type === 'payment_recovery' ? 'courtesy' : 'required'),
    anchorAt,
    // Exactly the variables the default templates declare (config/notice-ledger.json `templates`).
    payload: recovery
      ? { customer_name: 'Ada', amount: '19.00', currency: 'EUR', reference: `exc_${suffix}` }
      : { customer_name: 'Ada', plan_name: 'Coffee Box', amount: '19.00', currency: 'EUR' },
    state: 'sent',
  });
  if (withLedger) {
    await db.insert(noticeLedger).values({
      noticeKey: job.noticeKey,
      noticeType: type,
      identity,
      revision: 0,
      jobId: job.id,
      state: 'sent',
      claimedBy: 'test-worker',
      sentAt: new Date(),
      recipientDomain: 'example.test',
      oneTimeCode: code,
    });
  }
  return { job, code, anchorAt, fact };
}

/** A v1 page link's token for `noticeKey` (as mails sent before compact links carry), signed with the tests' NOTICE_KEY_SECRET. */
export function pageToken(
  noticeKey: string,
  { expiresAt = new Date(Date.now() + 24 * HOUR), purpose = 'page' }: { expiresAt?: Date; purpose?: LinkPurpose } = {},
): string {
  return signRecipientToken({ secret: process.env.NOTICE_KEY_SECRET ?? '', noticeKey, purpose, expiresAt });
}

/** A compact link's token for `noticeKey`, as every notice carries now: the tests' NOTICE_KEY_SECRET with RECIPIENT_LINK_KEYS unset. */
export function compactToken(noticeKey: string, purpose: LinkPurpose = 'page'): string {
  return signCompactToken({ keys: defaultLinkKeyRing(process.env.NOTICE_KEY_SECRET ?? ''), noticeKey, purpose });
}

/** A raw message's quoted-printable soft breaks and escapes undone: where its lines wrap depends on everything before. */
function decodedText(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_match, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** The recipient-page link in a raw message the SMTP sink received (its text part, quoted-printable decoded). */
export function recipientLinkIn(raw: string): string | null {
  return /https?:\/\/[^\s"<>]+\/r\/[A-Za-z0-9._~%-]+/.exec(decodedText(raw))?.[0] ?? null;
}

/** The one-time code in a raw message the SMTP sink received (quoted-printable decoded). */
export function oneTimeCodeIn(raw: string): string | null {
  return /confirmation code: ([A-Z2-9]{10})/.exec(decodedText(raw))?.[1] ?? null;
}

/** The token of a recipient-page link. */
export function tokenOf(link: string): string {
  return decodeURIComponent(new URL(link).pathname.split('/').at(-1) ?? '');
}
