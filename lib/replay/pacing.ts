import { recipientDomain } from '@/lib/jobs/rate-limit';

/**
 * How long publishing these recipients must take so that no domain receives more than
 * `perDomainPerSecond` wake-ups a second: the send path's token bucket is the real limit,
 * this keeps a replay from flooding the queue with wake-ups that would only be deferred.
 */
export function publishBudgetMs({ emails, perDomainPerSecond }: { emails: readonly (string | null)[]; perDomainPerSecond: number }): number {
  const perDomain = new Map<string, number>();
  for (const email of emails) {
    const domain = email ? recipientDomain(email) : '';
    perDomain.set(domain, (perDomain.get(domain) ?? 0) + 1);
  }
  let busiest = 0;
  for (const count of perDomain.values()) busiest = Math.max(busiest, count);
  return Math.ceil((busiest / perDomainPerSecond) * 1000);
}
