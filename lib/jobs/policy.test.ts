import { describe, expect, it } from 'vitest';
import { decidePolicy, type PolicyFacts } from './policy';
import { parseQuietHours } from '@/lib/windows/quiet-hours';

const now = new Date('2026-03-10T12:00:00Z');
const hour = 3_600_000;

function facts(overrides: Partial<Omit<PolicyFacts, 'job'>> & { job?: Partial<PolicyFacts['job']> } = {}): PolicyFacts {
  return {
    now,
    recipientSuppression: null,
    preference: 'opted_in',
    evidenceState: null,
    quietHours: null,
    ...overrides,
    job: {
      state: 'pending',
      dueAt: new Date(now.getTime() - hour),
      windowEarliest: null,
      category: 'courtesy',
      deadlineAt: new Date(now.getTime() + 24 * hour),
      nextAttemptAt: new Date(now.getTime() - hour),
      recipientTimeZone: 'UTC',
      ...overrides.job,
    },
  };
}

describe('send-path policy', () => {
  it('proceeds with a due, unrestricted job', () => {
    expect(decidePolicy(facts())).toEqual({ kind: 'proceed', quietHoursOverridden: false });
  });

  it.each(['sent', 'suppressed', 'cancelled', 'failed'] as const)('discards a %s job before anything else', (state) => {
    expect(decidePolicy(facts({ job: { state, dueAt: new Date(now.getTime() + hour) }, recipientSuppression: 'complaint' }))).toEqual({
      kind: 'discard',
      state,
    });
  });

  it('defers an early wake-up to due_at', () => {
    const dueAt = new Date(now.getTime() + hour);
    expect(decidePolicy(facts({ job: { dueAt, nextAttemptAt: dueAt } }))).toEqual({ kind: 'defer', until: dueAt, cause: 'early' });
  });

  it('defers a wake-up before window_earliest to it, even when due_at has come', () => {
    const windowEarliest = new Date(now.getTime() + 2 * hour);
    expect(decidePolicy(facts({ job: { windowEarliest } }))).toEqual({ kind: 'defer', until: windowEarliest, cause: 'early' });
    // A due time moved inside the window (quiet hours) is the later of the two.
    const dueAt = new Date(now.getTime() + 3 * hour);
    expect(decidePolicy(facts({ job: { windowEarliest, dueAt, nextAttemptAt: dueAt } }))).toEqual({ kind: 'defer', until: dueAt, cause: 'early' });
  });

  it('is open from its earliest to its latest instant, both included', () => {
    expect(decidePolicy(facts({ job: { windowEarliest: now, dueAt: now, nextAttemptAt: now } }))).toEqual({ kind: 'proceed', quietHoursOverridden: false });
    expect(decidePolicy(facts({ job: { deadlineAt: now } }))).toEqual({ kind: 'proceed', quietHoursOverridden: false });
  });

  it('suppresses window_missed after latest before looking at anything else', () => {
    const deadlineAt = new Date(now.getTime() - 1);
    expect(decidePolicy(facts({ job: { deadlineAt }, recipientSuppression: 'complaint' }))).toEqual({
      kind: 'suppress',
      reason: 'window_missed',
      detail: 'window_missed',
    });
    expect(decidePolicy(facts({ job: { deadlineAt, category: 'required' } }))).toMatchObject({ kind: 'suppress', reason: 'window_missed' });
  });

  it('a window that closes on a notice being retried is missed for the failure it was retried for', () => {
    const deadlineAt = new Date(now.getTime() - 1);
    expect(decidePolicy(facts({ job: { deadlineAt, lastErrorClass: 'connect_failed' } }))).toEqual({
      kind: 'suppress',
      reason: 'window_missed',
      detail: 'connect_failed',
    });
  });

  it.each([
    ['unsubscribed', 'unsubscribed'],
    ['hard_bounce', 'hard_bounce'],
    ['complaint', 'complaint'],
    ['manual', 'unsubscribed'],
  ] as const)('suppresses a %s recipient', (suppression, reason) => {
    expect(decidePolicy(facts({ recipientSuppression: suppression }))).toEqual({ kind: 'suppress', reason, detail: reason });
  });

  it('suppresses a courtesy notice to an opted-out recipient as unsubscribed, and sends a required one', () => {
    expect(decidePolicy(facts({ preference: 'opted_out' }))).toEqual({ kind: 'suppress', reason: 'unsubscribed', detail: 'opted_out' });
    expect(decidePolicy(facts({ preference: 'opted_out', job: { category: 'required' } }))).toEqual({ kind: 'proceed', quietHoursOverridden: false });
    expect(decidePolicy(facts({ preference: 'required', job: { category: 'required' } }))).toEqual({ kind: 'proceed', quietHoursOverridden: false });
  });

  it('an opt-out still applies to a retry whose backoff has not expired yet, and to one that comes due', () => {
    const retryAt = new Date(now.getTime() + 60_000);
    expect(decidePolicy(facts({ preference: 'opted_out', job: { nextAttemptAt: retryAt } }))).toMatchObject({ kind: 'suppress', reason: 'unsubscribed' });
    expect(decidePolicy(facts({ preference: 'opted_out', job: { state: 'claimed' } }))).toMatchObject({ kind: 'suppress', reason: 'unsubscribed' });
  });

  it.each([
    ['unsubscribed', { kind: 'proceed', quietHoursOverridden: false }],
    ['manual', { kind: 'suppress', reason: 'unsubscribed', detail: 'unsubscribed' }],
    ['hard_bounce', { kind: 'suppress', reason: 'hard_bounce', detail: 'hard_bounce' }],
    ['complaint', { kind: 'suppress', reason: 'complaint', detail: 'complaint' }],
  ] as const)('a required notice to a %s recipient: an unsubscribe does not stop it, a bounce, complaint or manual entry does', (suppression, decision) => {
    expect(decidePolicy(facts({ recipientSuppression: suppression, preference: 'opted_out', job: { category: 'required' } }))).toEqual(decision);
  });

  it('suppresses when the evidence is resolved', () => {
    expect(decidePolicy(facts({ evidenceState: 'resolved' }))).toEqual({ kind: 'suppress', reason: 'evidence_resolved', detail: 'evidence_resolved' });
    expect(decidePolicy(facts({ evidenceState: 'open' }))).toEqual({ kind: 'proceed', quietHoursOverridden: false });
  });

  it('lets a permanent suppression win over a pending retry', () => {
    const retryAt = new Date(now.getTime() + hour);
    expect(decidePolicy(facts({ job: { nextAttemptAt: retryAt }, recipientSuppression: 'hard_bounce' }))).toEqual({
      kind: 'suppress',
      reason: 'hard_bounce',
      detail: 'hard_bounce',
    });
    expect(decidePolicy(facts({ job: { nextAttemptAt: retryAt } }))).toEqual({ kind: 'defer', until: retryAt, cause: 'backoff' });
  });

  it('defers to the end of quiet hours when that is before the deadline', () => {
    const quietHours = parseQuietHours('11:00-13:00');
    expect(decidePolicy(facts({ quietHours }))).toEqual({ kind: 'defer', until: new Date('2026-03-10T13:00:00Z'), cause: 'quiet_hours' });
  });

  it('defers to the end of quiet hours when that is exactly latest', () => {
    const quietHours = parseQuietHours('11:00-13:00');
    const deadlineAt = new Date('2026-03-10T13:00:00Z');
    expect(decidePolicy(facts({ quietHours, job: { deadlineAt } }))).toEqual({ kind: 'defer', until: deadlineAt, cause: 'quiet_hours' });
  });

  it('never lets quiet hours push a notice past latest: courtesy is window_missed, required is sent inside them', () => {
    const quietHours = parseQuietHours('11:00-13:00');
    const deadlineAt = new Date('2026-03-10T12:30:00Z');
    expect(decidePolicy(facts({ quietHours, job: { deadlineAt } }))).toEqual({
      kind: 'suppress',
      reason: 'window_missed',
      detail: 'quiet_hours_cover_window',
    });
    expect(decidePolicy(facts({ quietHours, job: { deadlineAt, category: 'required' } }))).toEqual({ kind: 'proceed', quietHoursOverridden: true });
  });

  it('on a DST night (Berlin, clocks forward 02:00→03:00) quiet hours 21:00–08:00 end at 08:00 local = 06:00Z', () => {
    // 2026-03-29 01:30 CET = 00:30Z. The wall-clock walk said 08:00 − 01:30 = 6.5 h → 07:00Z (09:00 CEST), an hour late.
    const quietHours = parseQuietHours('21:00-08:00');
    const at = new Date('2026-03-29T00:30:00Z');
    const courtesyLatest = new Date('2026-03-29T06:30:00Z');
    expect(decidePolicy(facts({ now: at, quietHours, job: { recipientTimeZone: 'Europe/Berlin', deadlineAt: courtesyLatest } }))).toEqual({
      kind: 'defer',
      until: new Date('2026-03-29T06:00:00Z'),
      cause: 'quiet_hours',
    });
    // A window closing at 05:59:59Z lies wholly inside the night.
    const tight = new Date('2026-03-29T05:59:59.999Z');
    expect(decidePolicy(facts({ now: at, quietHours, job: { recipientTimeZone: 'Europe/Berlin', deadlineAt: tight } }))).toMatchObject({
      reason: 'window_missed',
      detail: 'quiet_hours_cover_window',
    });
    expect(decidePolicy(facts({ now: at, quietHours, job: { recipientTimeZone: 'Europe/Berlin', deadlineAt: tight, category: 'required' } }))).toEqual({
      kind: 'proceed',
      quietHoursOverridden: true,
    });
  });
});
