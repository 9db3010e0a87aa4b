import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ingestEvents } from '@/lib/events/ingest';
import type { NormalizedEvent } from '@/lib/events/types';
import { correlationOf } from '@/lib/ledger/notice-key';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob } from '@/testing/jobs';
import { classifyQuery, loadNoticeView, lookupNotices } from './lookup';
import { channelsOf } from './overview';

let t: TestDatabase;
beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => t.drop());

function twilioEvent(correlation: string, sid: string, status: string, type: NormalizedEvent['type']): NormalizedEvent {
  return {
    provider: 'twilio',
    eventId: `${sid}:${status}`,
    type,
    rawType: status,
    correlationId: correlation,
    messageId: null,
    providerMessageId: sid,
    recipient: null,
    bounceType: null,
    occurredAt: new Date(),
    details: { MessageStatus: status },
  };
}

describe('lookup of an SMS notice', () => {
  it('shows the channel and the number, and Twilio statuses in words', async () => {
    const id = randomBytes(4).toString('hex');
    const job = await insertTestJob(t.db, {
      fact: { type: 'payment_recovery', identity: { account_id: `acct_${id}`, reconciliation_id: `rec_${id}`, exception_id: `exc_${id}` }, revision: 0 },
      channel: 'sms',
      recipientPhone: '+14155550142',
    });
    const corr = correlationOf(job.noticeKey);
    const sid = `SM${'7'.repeat(32)}`;
    await ingestEvents(t.db, { events: [twilioEvent(corr, sid, 'sent', 'accepted'), twilioEvent(corr, sid, 'undelivered', 'soft_bounce')] });
    const view = await loadNoticeView(t.db, { noticeKey: job.noticeKey, secret: process.env.NOTICE_KEY_SECRET ?? '', messageIdDomain: 'notices.test' });
    expect(view).toMatchObject({ channel: 'sms', recipientPhone: '+14155550142' });
    const titles = view?.timeline.map((entry) => entry.title) ?? [];
    expect(titles).toContain('Twilio handed the text message to the carrier (twilio)');
    expect(titles).toContain('The carrier could not deliver the text message (twilio)');
    expect(view?.timeline.find((entry) => entry.kind === 'scheduled')?.facts).toContainEqual({ label: 'channel', value: 'SMS' });
  });

  it('finds the notices a number was texted, however support types it', async () => {
    const id = randomBytes(4).toString('hex');
    const job = await insertTestJob(t.db, {
      fact: { type: 'payment_recovery', identity: { account_id: `acct_${id}`, reconciliation_id: `rec_${id}`, exception_id: `exc_${id}` }, revision: 0 },
      channel: 'sms',
      recipientPhone: '+14155550199',
    });
    for (const typed of ['+14155550199', '+1 (415) 555-0199', ' +1 415 555 0199 ']) {
      const found = await lookupNotices(t.db, { query: typed, secret: process.env.NOTICE_KEY_SECRET ?? '', messageIdDomain: 'notices.test' });
      expect(found.ok && found.data.matches.map((match) => match.noticeKey)).toEqual([job.noticeKey]);
      expect(found.ok && found.data.describe).toBe('phone number +14155550199');
    }
    expect(classifyQuery('+1 415')).toMatchObject({ search: [{ kind: 'id' }] });
  });
});

describe('overview split by channel', () => {
  it('sums providers into email and sms, both always listed', () => {
    const rows = [
      { provider: 'generic', noticeType: 'a', accepted: 5, delivered: 4, bounced: 1, complained: 0, gap: 1 },
      { provider: 'ses', noticeType: 'a', accepted: 2, delivered: 2, bounced: 0, complained: 0, gap: 0 },
      { provider: 'twilio', noticeType: 'payment_recovery', accepted: 3, delivered: 1, bounced: 1, complained: 0, gap: 2 },
    ];
    expect(channelsOf(rows)).toEqual([
      { channel: 'email', accepted: 7, delivered: 6, bounced: 1, gap: 1 },
      { channel: 'sms', accepted: 3, delivered: 1, bounced: 1, gap: 2 },
    ]);
    expect(channelsOf([]).map((row) => row.channel)).toEqual(['email', 'sms']);
  });
});
