import { randomUUID } from 'node:crypto';
import { noticeKey } from '@/lib/ledger/notice-key';
import type { NoticeFact } from '@/lib/windows/notice-fact';
import { customers, domains, HOUR, locales, plans, timeZones, type JobSeed, type Story } from './story';

/**
 * Subscriptions whose charges are spread from 5 days ago to 10 days ahead, each with its T-72 and
 * T-24 renewal notices: the ones due over two hours ago already sent, a few of them with a
 * duplicate the ledger suppressed (a queue redelivery, a concurrent worker, a replay).
 */
export function addRenewals(story: Story, subscriptions: number): void {
  const { now, random, pick } = story;
  for (let i = 0; i < subscriptions; i += 1) {
    const subscriptionId = `sub_${String(1000 + i)}`;
    const email = `customer${i}@${pick(domains)}`;
    const timeZone = pick(timeZones);
    // Charges spread from 5 days ago to 10 days ahead; T-72 and T-24 notices before each.
    const chargeAt = new Date(now.getTime() + (-5 * 24 + random() * 15 * 24) * HOUR);
    const periodStart = chargeAt.toISOString().slice(0, 10);
    for (const [type, before] of [
      ['renewal_notice_t72', 72],
      ['renewal_notice_t24', 24],
    ] as const) {
      const fact: NoticeFact = { type, identity: { subscription_id: subscriptionId, period_start: periodStart }, revision: 0 };
      const dueAt = new Date(chargeAt.getTime() - before * HOUR);
      const deadlineAt = new Date(chargeAt.getTime() - (before === 72 ? 24 : 2) * HOUR);
      if (dueAt.getTime() > now.getTime() + 7 * 24 * HOUR) continue;
      const job: JobSeed = {
        id: randomUUID(),
        key: noticeKey(story.secret, fact),
        fact,
        email,
        timeZone,
        dueAt,
        deadlineAt,
        state: 'pending',
        suppressionReason: null,
        attempts: 0,
        evidenceRef: null,
        customerId: `cus_${String(5000 + i)}`,
        source: 'billing-scheduler',
        payload: { customer_name: pick(customers), plan_name: pick(plans), amount: `${(9 + Math.floor(random() * 40)).toString()}.00`, currency: 'EUR' },
        anchorAt: chargeAt,
        locale: pick(locales),
      };
      if (dueAt.getTime() < now.getTime() - 2 * HOUR) {
        job.state = 'sent';
        job.attempts = 1;
        const roll = random();
        story.addSent(job, dueAt, roll < 0.03 ? 'queue_redelivery' : roll < 0.045 ? 'concurrent_worker' : roll < 0.055 ? 'replay' : null);
      }
      story.jobs.push(job);
    }
  }
}
