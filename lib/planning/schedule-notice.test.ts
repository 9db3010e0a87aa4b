import { describe, expect, it } from 'vitest';
import type { JobRow } from '@/db/schema/jobs';
import { isTimeZone, utcInstant } from '@/lib/api/fields';
import { scheduleRequest } from '@/lib/api/producer';
import { differingFields, timingProblems, type ResolvedScheduleRequest } from './schedule-notice';

/** A request with its deadline given, as scheduleNotice resolves it before comparing. */
const resolvedRequest = (input: unknown) => scheduleRequest.parse(input) as ResolvedScheduleRequest;

const DAY = 86_400_000;
const base = {
  type: 'renewal_notice_t72',
  identity: { subscription_id: 'sub_1', period_start: '2026-12-01' },
  recipient: { email: 'Ana@Example.com', timeZone: 'America/New_York' },
  dueAt: '2026-11-28T09:00:00Z',
  deadlineAt: '2026-11-30T09:00:00.000Z',
  payload: { plan: 'Team', amount: { value: '49.00', currency: 'EUR' } },
  source: 'renewals',
};

describe('scheduleRequest', () => {
  it('normalises the email, defaults revision and time zone, and parses UTC instants', () => {
    const parsed = scheduleRequest.parse({ ...base, recipient: { email: 'Ana@Example.com' } });
    expect(parsed.recipient).toEqual({ email: 'ana@example.com', timeZone: 'UTC' });
    expect(parsed.revision).toBe(0);
    expect(parsed.dueAt).toEqual(new Date('2026-11-28T09:00:00Z'));
  });

  it.each(['2026-11-28T09:00:00+00:00', '2026-11-28T10:00:00+01:00', '2026-11-28T09:00:00', '2026-11-28', 'tomorrow', '2026-13-01T00:00:00Z'])(
    'refuses %s as an instant',
    (text) => {
      expect(utcInstant.safeParse(text).success).toBe(false);
    },
  );

  it('refuses a deadline before the due time, naming deadlineAt', () => {
    const result = scheduleRequest.safeParse({ ...base, deadlineAt: '2026-11-27T09:00:00Z' });
    expect(result.success).toBe(false);
    expect(result.error?.issues.map((issue) => issue.path.join('.'))).toEqual(['deadlineAt']);
  });

  it('knows IANA zones from typos', () => {
    expect(isTimeZone('Europe/Berlin')).toBe(true);
    expect(isTimeZone('Europe/Berlinn')).toBe(false);
  });
});

describe('differingFields', () => {
  const request = resolvedRequest(base);
  const job = {
    recipientEmail: 'ana@example.com',
    recipientTimeZone: 'America/New_York',
    dueAt: new Date('2026-11-28T09:00:00Z'),
    deadlineAt: new Date('2026-11-30T09:00:00Z'),
    payload: { amount: { currency: 'EUR', value: '49.00' }, plan: 'Team' },
    evidenceRef: null,
    customerId: null,
    source: 'something-else',
    batchId: 'b1',
  } as unknown as JobRow;

  it('treats key order in the payload and provenance (source, batch) as the same notice', () => {
    expect(differingFields(job, request)).toEqual([]);
  });

  it('names every field that changed', () => {
    const changed = resolvedRequest({
      ...base,
      dueAt: '2026-11-28T10:00:00Z',
      payload: { plan: 'Pro' },
      evidenceRef: 'ev1',
      recipient: { email: 'bo@example.com', timeZone: 'UTC' },
    });
    expect(differingFields(job, changed)).toEqual(['recipient.email', 'recipient.timeZone', 'dueAt', 'payload', 'evidenceRef']);
  });
});

describe('timingProblems (clock injected)', () => {
  const request = resolvedRequest(base);
  it('accepts a due time in the past while the deadline is ahead (send as soon as possible)', () => {
    expect(timingProblems(request, { now: new Date('2026-11-29T00:00:00Z'), maxDelayMs: 60 * DAY })).toEqual([]);
  });
  it('refuses a passed deadline and a due time beyond MAX_DELAY', () => {
    expect(timingProblems(request, { now: new Date('2026-12-01T00:00:00Z'), maxDelayMs: 60 * DAY })).toEqual([expect.stringMatching(/^deadlineAt:/)]);
    expect(timingProblems(request, { now: new Date('2026-11-01T00:00:00Z'), maxDelayMs: 7 * DAY })).toEqual([expect.stringMatching(/^dueAt:/)]);
  });
});
