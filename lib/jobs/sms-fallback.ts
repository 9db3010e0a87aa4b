import type { Db, DbOrTx } from '@/db/client';
import { recordAttempt, type AttemptRecord } from '@/db/queries/attempts';
import { releaseClaim } from '@/db/queries/ledger/commit';
import { setPreferenceReported } from '@/lib/webhooks/outbox';
import { moveJobToEmail } from '@/db/queries/sms-fallback';
import { insertEvidenceEntries, type NewEvidenceEntry } from '@/db/queries/evidence-record';
import type { JobRow } from '@/db/schema';
import { sendOutcomes } from '@/lib/metrics/registry';
import type { HandlerResult } from '@/lib/queue/types';
import { smsRefusalText } from '@/lib/sms/refusals';
import type { SmsOutcome } from '@/lib/sms/transport';
import type { NoticeConfig } from '@/lib/windows/load-config';

/**
 * A required text that can never reach this number goes by email instead (issue 23).
 *
 * Which refusals: Twilio's answers that say the number will not take a text from us, whatever we
 * do — 21610 (the recipient replied STOP), 21211 (not a phone number), 21614 / 21635 / 30006 (a
 * landline). Each is an answer *before* a message was created, so nothing left: the SMS is
 * definitely not out. A 429, a 5xx or no answer is not one of them (retried, or quarantined).
 *
 * Who: a `required` job (a notice the law calls for) whose type allows it (`emailWhenSmsRefused`,
 * on by default for required types) and which has an email address. A courtesy text never
 * falls back: the recipient's STOP, or their missing mobile, is an answer for a notice they may
 * decline.
 *
 * How it stays one notice. The notice key is the business fact and the channel is how it
 * reaches the recipient (ARCHITECTURE.md "Channels"), so the email is not a second notice: it is
 * the same job and the same ledger row. In one transaction the claim is released (conditional on
 * our claim token), the job is switched to `email` and made pending now, and the attempt records
 * the refusal (`permanent_failure`, detail `email_fallback:<code>`). The next wake-up claims the
 * released row again — keeping its one-time code — and sends the email through the ordinary
 * path, with the email's own suppressions in force. Because the claim is only released after the
 * definite refusal, and the job is no longer an SMS, no path sends both a text and an email for
 * the fact. A crash before that transaction leaves the claim held (quarantine, as any crash after
 * a send); a crash after it leaves a pending email job that the returned wake-up, or the sweeper,
 * picks up.
 */

/**
 * Without Twilio (an email-only deployment): the enabled types that go only by SMS, which stop the
 * worker's start-up, and those that also go by email, whose texts are sent by email instead.
 */
export function typesWithoutSms(config: NoticeConfig): { smsOnly: string[]; byEmail: string[] } {
  const sms = Object.values(config.noticeTypes).filter((type) => type.enabled && type.channels.includes('sms'));
  return {
    smsOnly: sms.filter((type) => !type.channels.includes('email')).map((type) => type.name),
    byEmail: sms.filter((type) => type.channels.includes('email')).map((type) => type.name),
  };
}

/**
 * Why this job goes by email instead, or null: the Twilio code of a refusal that falls back, or
 * `sms_not_configured` — this worker has no Twilio and the type also goes by email (an
 * email-only deployment: the text was never sent, so courtesy and required alike go by email).
 */
export function smsFallbackCode(config: NoticeConfig, job: JobRow, outcome: SmsOutcome): string | null {
  if (job.channel !== 'sms' || !job.recipientEmail || outcome.kind !== 'rejected') return null;
  const type = Object.hasOwn(config.noticeTypes, job.noticeType) ? config.noticeTypes[job.noticeType] : undefined;
  if (outcome.errorClass === 'sms_not_configured') return type?.channels.includes('email') ? 'sms_not_configured' : null;
  if (job.category !== 'required' || !outcome.permanent) return null;
  // A type no longer configured keeps the default of its category.
  if (type && !type.emailWhenSmsRefused) return null;
  const code = /^twilio_(\d{5})$/.exec(outcome.errorClass)?.[1];
  return code && smsRefusalText(code) ? code : null;
}

class ClaimNotOurs extends Error {}

export type SmsFallbackParams = {
  db: Db;
  config: NoticeConfig;
  job: JobRow;
  outcome: SmsOutcome;
  ownedToken: string | null;
  attempt: (outcome: AttemptRecord['outcome'], extra?: Partial<AttemptRecord>) => AttemptRecord;
  now: Date;
  /** The refused text's evidence entry, written in the fallback's transaction (lib/evidence/send-evidence.ts). */
  evidence?: NewEvidenceEntry | null;
};

/** The fallback's one transaction, or null when it does not apply (the caller records the refusal as before). */
export async function commitSmsFallback({
  db,
  config,
  job,
  outcome,
  ownedToken,
  attempt,
  now,
  evidence = null,
}: SmsFallbackParams): Promise<HandlerResult | null> {
  const code = smsFallbackCode(config, job, outcome);
  if (!code || outcome.kind !== 'rejected') return null;
  try {
    const moved = await db.transaction(async (tx) => {
      if (!(await moveJobToEmail(tx, { jobId: job.id, refusedCode: code, errorClass: outcome.errorClass, nextAttemptAt: now }))) return false;
      // Someone else holds the claim now (it expired and was taken): undo, and let the ordinary path decide.
      if (ownedToken && !(await releaseClaim(tx, { noticeKey: job.noticeKey, claimToken: ownedToken }))) throw new ClaimNotOurs();
      if (outcome.optOut && job.recipientPhone) await recordSmsStop(tx, job.recipientPhone);
      await recordAttempt(
        tx,
        attempt(outcome.permanent ? 'permanent_failure' : 'retryable_failure', { errorClass: outcome.errorClass, detail: `email_fallback:${code}` }),
      );
      if (evidence) await insertEvidenceEntries(tx, [evidence]);
      return true;
    });
    if (!moved) return null;
  } catch (error) {
    if (error instanceof ClaimNotOurs) return null;
    throw error;
  }
  sendOutcomes.inc({ notice_type: job.noticeType, outcome: 'email_fallback' });
  return { ack: true, wakeAt: now };
}

/** Twilio 21610: the recipient replied STOP to our sender. Their SMS opt-out, recorded where every preference is. */
export async function recordSmsStop(tx: DbOrTx, phone: string): Promise<void> {
  await setPreferenceReported(tx, {
    recipient: phone,
    category: 'courtesy',
    channel: 'sms',
    state: 'opted_out',
    source: 'provider_event',
    actor: 'twilio:21610',
  });
}
