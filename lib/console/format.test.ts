import { describe, expect, it } from 'vitest';
import { formatDuration, formatUtc, shortKey } from './format';
import { suggestResolution } from './quarantine-view';
import { classifyQuery, verdictOf } from './lookup';
import { explainAttempt, explainSuppression } from './words';

describe('format', () => {
  it('shows two units of a duration', () => {
    expect(formatDuration(0)).toBe('0 s');
    expect(formatDuration(95_000)).toBe('1 min 35 s');
    expect(formatDuration(26 * 3_600_000 + 5 * 60_000)).toBe('1 d 2 h');
    expect(formatDuration(-90 * 60_000)).toBe('1 h 30 min');
    expect(formatDuration(3_616_000)).toBe('1 h');
    expect(formatDuration(15 * 60_000)).toBe('15 min');
    expect(formatDuration(59_000)).toBe('59 s');
  });

  it('prints UTC minutes and shortens keys', () => {
    expect(formatUtc('2026-11-29T02:07:30.123Z')).toBe('2026-11-29 02:07 UTC');
    expect(formatUtc(null)).toBe('—');
    expect(shortKey('a'.repeat(64))).toBe(`${'a'.repeat(12)}…`);
  });
});

describe('lookup query classification', () => {
  it('reads a Message-ID as its correlation, a key prefix', () => {
    const corr = '0123456789abcdef0123456789abcdef';
    expect(classifyQuery(`<${corr}@notices.example.com>`)).toEqual({
      search: [{ kind: 'key_prefix', prefix: corr }],
      describe: `Message-ID → correlation ${corr}`,
    });
  });

  it('reads emails, key prefixes and other ids', () => {
    expect(classifyQuery(' Jane@Example.com ')).toMatchObject({ search: [{ kind: 'email', email: 'jane@example.com' }] });
    expect(classifyQuery('DEADBEEF')).toMatchObject({
      search: [
        { kind: 'key_prefix', prefix: 'deadbeef' },
        { kind: 'id', id: 'DEADBEEF' },
      ],
    });
    expect(classifyQuery('sub_123')).toMatchObject({ search: [{ kind: 'id', id: 'sub_123' }] });
    expect(classifyQuery('   ')).toHaveProperty('error');
  });
});

describe('plain words', () => {
  it('explains suppressions, deferrals and duplicates', () => {
    expect(explainSuppression('hard_bounce')).toBe("the recipient's address hard-bounced before");
    expect(explainAttempt('deferred', 'quiet_hours')).toBe("Deferred because of the recipient's quiet hours");
    expect(explainAttempt('suppressed_duplicate', null)).toMatch(/no second email was sent/);
    expect(
      verdictOf({ jobState: 'sent', ledgerState: 'sent', suppressionReason: null, sentAt: new Date('2026-11-29T02:00:00Z'), duplicatesSuppressed: 1 }),
    ).toBe('Sent once at 2026-11-29 02:00 UTC. 1 duplicate attempt was suppressed, so it went out once.');
    // SendGrid's 202 is a hand-over, not a send: a dropped message is never "sent once".
    const handedOver = { jobState: 'sent', ledgerState: 'sent', suppressionReason: null, sentAt: new Date('2026-11-29T02:00:00Z'), duplicatesSuppressed: 0 };
    expect(verdictOf({ ...handedOver, providerStatus: 'dropped' })).toMatch(
      /^Handed over once at 2026-11-29 02:00 UTC, but the provider dropped it: it was not delivered/,
    );
    expect(verdictOf({ ...handedOver, providerStatus: 'accepted' })).toMatch(/^Handed over once .*not yet said it processed/);
    expect(verdictOf({ ...handedOver, providerStatus: 'processed' })).toBe('Sent once at 2026-11-29 02:00 UTC.');
    expect(verdictOf({ jobState: 'suppressed', ledgerState: null, suppressionReason: 'unsubscribed', sentAt: null, duplicatesSuppressed: 0 })).toBe(
      'Not sent: the recipient had unsubscribed.',
    );
  });
});

describe('quarantine suggestion', () => {
  const event = (eventType: string) => ({
    eventType,
    occurredAt: '2026-11-29T02:00:00Z',
    provider: 'ses',
    providerMessageId: null,
    matchedBy: 'correlation' as const,
  });
  it('follows the evidence, then the deadline', () => {
    expect(suggestResolution({ evidence: [event('accepted')], deadlineInMs: -1 }).suggestion).toBe('confirm_sent');
    expect(suggestResolution({ evidence: [event('bounce')], deadlineInMs: 10 }).suggestion).toBe('suppress');
    expect(suggestResolution({ evidence: [], deadlineInMs: -1 }).suggestion).toBe('suppress');
    expect(suggestResolution({ evidence: [], deadlineInMs: 60_000 }).suggestion).toBe('release');
  });
  it('a Twilio `failed` never left Twilio: release while the window is open, suppress after; a SendGrid drop stays suppress', () => {
    const twilioFailed = { ...event('dropped'), provider: 'twilio', rawType: 'failed' };
    expect(suggestResolution({ evidence: [twilioFailed], deadlineInMs: 60_000 }).suggestion).toBe('release');
    expect(suggestResolution({ evidence: [twilioFailed], deadlineInMs: -1 }).suggestion).toBe('suppress');
    expect(suggestResolution({ evidence: [{ ...event('dropped'), provider: 'sendgrid', rawType: 'dropped' }], deadlineInMs: 60_000 }).suggestion).toBe(
      'suppress',
    );
    expect(
      suggestResolution({ evidence: [{ ...event('accepted'), provider: 'twilio', rawType: 'sent' }, twilioFailed], deadlineInMs: 60_000 }).suggestion,
    ).toBe('confirm_sent');
  });
});
