import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { noticeKey } from '@/lib/ledger/notice-key';
import type { NoticeFact } from '@/lib/windows/notice-fact';
import { customers, domains, HOUR, locales, timeZones, type JobSeed, type Story } from './story';

/**
 * Accounts left with an exception by the last three nightly reconciliations, one payment
 * recovery each citing its exception as evidence: an eighth of the exceptions resolved (their
 * notices suppressed `evidence_resolved` once due), the older ones already sent.
 */
export function addPaymentRecoveries(story: Story, accounts: number): void {
  const { now, random, pick } = story;
  for (let i = 0; i < accounts; i += 1) {
    const accountId = `acct_${String(200 + i)}`;
    const reconciliationId = `recon_${new Date(now.getTime() - (1 + (i % 3)) * 24 * HOUR).toISOString().slice(0, 10)}`;
    const exceptionId = `exc_${String(i)}`;
    const fact: NoticeFact = {
      type: 'payment_recovery',
      identity: { account_id: accountId, reconciliation_id: reconciliationId, exception_id: exceptionId },
      revision: 0,
    };
    const dueAt = new Date(now.getTime() + (-3 * 24 + random() * 5 * 24) * HOUR);
    const evidenceRef = `recon-exception:${reconciliationId}:${exceptionId}`;
    const resolved = random() < 0.12;
    story.evidence.push({ ref: evidenceRef, state: resolved ? 'resolved' : 'open', summary: `Card payment failed at nightly reconciliation (${exceptionId})` });
    const job: JobSeed = {
      id: randomUUID(),
      key: noticeKey(story.secret, fact),
      fact,
      email: `billing${i}@${pick(domains)}`,
      timeZone: pick(timeZones),
      dueAt,
      deadlineAt: new Date(dueAt.getTime() + 5 * 24 * HOUR),
      state: 'pending',
      suppressionReason: null,
      attempts: 0,
      evidenceRef,
      customerId: `cus_b${String(i)}`,
      source: 'nightly-reconciliation',
      payload: {
        customer_name: pick(customers),
        amount: `${(50 + Math.floor(random() * 900)).toString()}.00`,
        currency: 'EUR',
        reference: `RC-${reconciliationId.slice(6)}-${String(i).padStart(4, '0')}`,
      },
      anchorAt: new Date(now.getTime() - (1 + (i % 3)) * 24 * HOUR),
      locale: pick(locales),
    };
    if (dueAt < now && resolved) {
      job.state = 'suppressed';
      job.suppressionReason = 'evidence_resolved';
      story.attempts.push({
        jobId: job.id,
        key: job.key,
        at: dueAt,
        outcome: 'suppressed_policy',
        detail: 'evidence_resolved',
        errorClass: null,
        claimToCommitMs: null,
      });
    } else if (dueAt.getTime() < now.getTime() - 2 * HOUR) {
      job.state = 'sent';
      job.attempts = 1;
      story.addSent(job, dueAt, random() < 0.04 ? 'queue_redelivery' : null);
    }
    story.jobs.push(job);
  }
}

/**
 * Once the jobs are written: a third of the payment recoveries still to go have a phone number, so
 * they go by SMS (the type's channel, email its fallback) to the demo's Twilio peer, and the four
 * soonest are due now.
 */
export async function sendSomeRecoveriesBySms(client: pg.PoolClient): Promise<void> {
  // +1 415 555 0000 replied STOP (21610).
  await client.query(
    `update reminder_jobs
        set channel = 'sms',
            recipient_phone = case when substring(customer_id from 6)::int = 3 then '+14155550000'
                                   else '+1415555' || lpad((substring(customer_id from 6)::int % 90 + 10)::text, 4, '01') end
      where notice_type = 'payment_recovery' and state = 'pending' and substring(customer_id from 6)::int % 3 = 0`,
  );
  // The four soonest of them are due now, so a newcomer sees texts go out (and the STOP refusal) as the demo starts.
  await client.query(
    `update reminder_jobs set due_at = now() - interval '5 minutes', next_attempt_at = now() - interval '5 minutes'
      where id in (select id from reminder_jobs where channel = 'sms' and state = 'pending' order by recipient_phone = '+14155550000' desc, due_at limit 4)`,
  );
}
