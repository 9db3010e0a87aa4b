import { describe, expect, it } from 'vitest';
import { buildTimeline } from './timeline';

describe('the customer in the timeline', () => {
  it('says in words that the customer asked to cancel from the notice link, and when', () => {
    const entries = buildTimeline({
      job: null,
      ledger: null,
      attempts: [],
      events: [],
      suppression: null,
      evidence: null,
      audit: [],
      cancellation: {
        id: 1,
        noticeKey: 'a'.repeat(64),
        jobId: '00000000-0000-4000-8000-000000000001',
        noticeType: 'renewal_notice_t72',
        identity: { subscription_id: 'sub_1', period_start: '2026-12-04' },
        subjectId: 'sub_1',
        customerId: null,
        source: 'recipient_page',
        codeVerified: true,
        requestedAt: new Date('2026-12-02T10:14:59Z'),
      },
    });
    expect(entries).toEqual([
      {
        at: '2026-12-02T10:14:59.000Z',
        kind: 'customer',
        title: 'Customer asked to cancel from the notice link, 2 Dec 10:14 UTC',
        facts: [
          { label: 'what happens next', value: 'recorded for the producer (GET /api/v1/cancellation-requests); the notice itself is unchanged' },
          { label: 'confirmation code', value: 'typed and matched' },
        ],
        tone: 'neutral',
      },
    ]);
  });
});

describe('the provider’s answer in the timeline', () => {
  const ledger = (providerStatus: 'accepted' | 'processed' | 'dropped' | null) => ({
    noticeKey: 'b'.repeat(64),
    noticeType: 'renewal_notice_t72',
    identity: { subscription_id: 'sub_2', period_start: '2026-12-04' },
    revision: 0,
    state: 'sent' as const,
    claimedBy: 'worker-1',
    claimedAt: new Date('2026-12-04T09:00:00Z'),
    sentAt: new Date('2026-12-04T09:00:01Z'),
    providerMessageId: 'sg-msg-1',
    recipientDomain: 'example.com',
    source: 'worker',
    resolution: null,
    resolvedAt: null,
    hasOneTimeCode: true,
    templateVersionId: null,
    providerStatus,
  });
  const sentEntry = (providerStatus: 'accepted' | 'processed' | 'dropped' | null) =>
    buildTimeline({
      job: null,
      ledger: ledger(providerStatus),
      attempts: [],
      events: [],
      suppression: null,
      evidence: null,
      audit: [],
      cancellation: null,
    }).find((entry) => entry.title === 'Ledger recorded the notice as sent');

  it('says a provisional answer is not yet settled, and that a dropped message will not be delivered', () => {
    expect(sentEntry('accepted')).toMatchObject({
      tone: 'warn',
      facts: expect.arrayContaining([{ label: 'provider answer', value: expect.stringMatching(/^accepted, not yet processed/) }]),
    });
    expect(sentEntry('dropped')).toMatchObject({
      tone: 'bad',
      facts: expect.arrayContaining([{ label: 'provider answer', value: expect.stringMatching(/will not deliver/) }]),
    });
    expect(sentEntry('processed')).toMatchObject({
      tone: 'good',
      facts: expect.arrayContaining([{ label: 'provider answer', value: expect.stringMatching(/^processed/) }]),
    });
  });

  it('says nothing of it for a final answer (every transport but SendGrid)', () => {
    expect(sentEntry(null)?.facts.map((f) => f.label)).toEqual(['provider id']);
    expect(sentEntry(null)?.tone).toBe('good');
  });
});
