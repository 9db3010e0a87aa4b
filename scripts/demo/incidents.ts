import type { Story } from './story';

/**
 * What went wrong this week, on jobs the earlier scenarios made: hard bounces and a complaint
 * (the address goes on the suppression list, a later notice is suppressed), claims stuck by
 * workers that died mid-send (for quarantine, three with provider evidence), and retryable
 * failures for the overview. Returns the number of stuck claims.
 */
export function addIncidents(story: Story): number {
  const { now, jobs } = story;
  const bounced = jobs.filter((job) => job.state === 'sent').slice(0, 6);
  bounced.forEach((job, index) => {
    const type = index === 5 ? 'complaint' : 'bounce';
    const eventId = `evt-${type}-${job.key.slice(0, 16)}`;
    story.events.push({
      eventId,
      type,
      rawType: type === 'bounce' ? 'Bounce' : 'SpamComplaint',
      key: job.key,
      providerId: null,
      recipient: job.email,
      at: new Date(job.dueAt.getTime() + 60_000),
      bounceType: type === 'bounce' ? 'Permanent' : null,
    });
    story.suppressions.push({ email: job.email.toLowerCase(), reason: type === 'bounce' ? 'hard_bounce' : 'complaint', eventId });
  });

  // Stuck claims: workers that died mid-send 20–90 minutes ago. Three have provider evidence.
  const stuck = jobs.filter((job) => job.state === 'pending' && job.dueAt < now && job.fact.type !== 'payment_recovery').slice(0, 7);
  stuck.forEach((job, index) => {
    job.state = 'claimed';
    job.attempts = 1;
    const claimedAt = new Date(now.getTime() - (20 + index * 12) * 60_000);
    story.ledger.push({
      key: job.key,
      jobId: job.id,
      state: 'claimed',
      claimedAt,
      sentAt: null,
      providerId: null,
      domain: job.email.split('@')[1] ?? '',
      fact: job.fact,
    });
    story.attempts.push({
      jobId: job.id,
      key: job.key,
      at: claimedAt,
      outcome: 'unknown',
      detail: 'worker lost during send',
      errorClass: 'connection_lost',
      claimToCommitMs: null,
    });
    if (index < 3) {
      story.events.push({
        eventId: `evt-acc-stuck-${job.key.slice(0, 16)}`,
        type: 'delivered',
        rawType: 'delivered',
        key: job.key,
        providerId: null,
        recipient: job.email,
        at: new Date(claimedAt.getTime() + 4_000),
        bounceType: null,
      });
    }
  });

  // A week of retryable/permanent failures for the overview.
  for (const job of jobs.filter((j) => j.state === 'sent').slice(10, 60)) {
    story.attempts.push({
      jobId: job.id,
      key: job.key,
      at: new Date(job.dueAt.getTime() - 60_000),
      outcome: 'retryable_failure',
      detail: '451 4.7.1 try again later',
      errorClass: 'smtp_4xx',
      claimToCommitMs: null,
    });
  }
  return stuck.length;
}
