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
