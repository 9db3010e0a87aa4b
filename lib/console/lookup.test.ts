import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { seedConsoleScenario, type ConsoleScenario } from '@/e2e/fixtures/console-data';
import { seedWindowScenario, type WindowScenario } from '@/e2e/fixtures/window-data';
import { insertTestJob } from '@/testing/jobs';
import type { LookupResult } from '@/lib/api/console/lookup';
import { lookupNotices } from './lookup';

const secret = 'test-secret-0123456789abcdef0123456789abcdef';
let t: TestDatabase;
let scenario: ConsoleScenario;
let windowed: WindowScenario;

async function lookup(query: string): Promise<LookupResult> {
  const result = await lookupNotices(t.db, { query, secret, messageIdDomain: 'notices.example.com' });
  if (!result.ok) throw new Error(result.refusal.message);
  return result.data;
}

beforeAll(async () => {
  t = await createTestDatabase();
  scenario = await seedConsoleScenario(t.db, { secret });
  windowed = await seedWindowScenario(t.db, { secret });
});
afterAll(async () => {
  await t.drop();
});

describe('support lookup', () => {
  it('finds both notices of the customer who got two emails, by email, customer and subscription', async () => {
    const expected = [...scenario.duplicateCustomer.keys].sort();
    for (const query of ['TWICE@example.com', scenario.duplicateCustomer.customerId, scenario.duplicateCustomer.subscriptionId]) {
      expect((await lookup(query)).matches.map((match) => match.noticeKey).sort(), query).toEqual(expected);
    }
  });

  it('explains the two emails: two revisions each sent once, and the duplicate that was suppressed', async () => {
    const result = await lookup(scenario.duplicateCustomer.email);
    const revisionOne = result.notices.find((notice) => notice.derivation.revision === 1);
    expect(revisionOne?.verdict).toMatch(
      /^Sent once at .* 1 duplicate attempt was suppressed, so it went out once\. This is revision 1: the producer corrected the notice/,
    );
    expect(revisionOne?.timeline.map((entry) => entry.kind)).toEqual(['scheduled', 'attempt', 'claim', 'attempt', 'ledger', 'message', 'provider', 'attempt']);
    // A sent notice offers what the customer received; this seeded row recorded no template version, and says so.
    expect(revisionOne?.timeline.find((entry) => entry.kind === 'message')).toMatchObject({
      title: 'What the customer received',
      facts: [{ label: 'template version', value: expect.stringMatching(/^unknown/) as string }],
    });
    expect(revisionOne?.timeline.find((entry) => entry.title.startsWith('Duplicate suppressed'))?.facts).toContainEqual({ label: 'worker', value: 'worker-2' });
    expect(revisionOne?.timeline[1]?.title).toBe("Deferred because of the recipient's quiet hours");
    expect(result.notices.every((notice) => notice.ledgerState === 'sent')).toBe(true);
  });

  it('shows how the key was derived and that it recomputes, without the secret or the one-time code', async () => {
    const result = await lookup(scenario.duplicateCustomer.email);
    const notice = result.notices[0];
    expect(notice?.derivation).toMatchObject({
      noticeType: 'renewal_notice_t72',
      verified: true,
      fields: [
        { name: 'subscription_id', value: scenario.duplicateCustomer.subscriptionId },
        { name: 'period_start', value: '2026-12-01' },
      ],
    });
    const text = JSON.stringify(result);
    expect(text).not.toContain(secret);
    expect(text).not.toContain('CODE-NEVER-SHOWN');
    expect(text).not.toContain('"payload"');
    expect(text).toContain('stored (kept for resends, never shown)');
  });

  it('finds a notice by Message-ID, key prefix and provider id', async () => {
    const key = scenario.duplicateCustomer.keys[1] ?? '';
    expect((await lookup(`<${key.slice(0, 32)}@notices.example.com>`)).matches.map((match) => match.noticeKey)).toEqual([key]);
    expect((await lookup(key.slice(0, 10))).matches.map((match) => match.noticeKey)).toContain(key);
    expect((await lookup('ses-1')).matches.map((match) => match.noticeKey)).toEqual([key]);
    expect((await lookup('ses-alpha')).matches.map((match) => match.noticeKey)).toEqual([scenario.stuckWithEvidence]);
  });

  it('finds a notice by the provider id of an event that was never linked, through its correlation', async () => {
    const key = scenario.duplicateCustomer.keys[0] ?? '';
    await t.pool.query(
      `insert into provider_events (provider, event_id, event_type, raw_type, correlation_id, provider_message_id, notice_key, occurred_at)
       values ('ses', 'unlinked-1', 'delivered', 'Delivery', $1, 'ses-unlinked-77', null, now())`,
      [key.slice(0, 32)],
    );
    expect((await lookup('ses-unlinked-77')).matches.map((match) => match.noticeKey)).toEqual([key]);
  });

  it('derives and verifies the key of a configured required type, with its configured label', async () => {
    const job = await insertTestJob(t.db, {
      fact: { type: 'trial_conversion_notice', identity: { period_start: '2026-10-01', subscription_id: 'sub_trial_lookup' }, revision: 1 },
      category: 'required',
    });
    const notice = (await lookup('sub_trial_lookup')).notices.find((view) => view.noticeKey === job.noticeKey);
    expect(notice?.label).toBe('Trial or promotion ending (required by law or card network)');
    expect(notice?.derivation).toMatchObject({
      noticeType: 'trial_conversion_notice',
      verified: true,
      canonical: expect.stringContaining('23:trial_conversion_notice15:subscription_id16:sub_trial_lookup12:period_start10:2026-10-01'),
      fields: [
        { name: 'subscription_id', value: 'sub_trial_lookup' },
        { name: 'period_start', value: '2026-10-01' },
      ],
    });
  });

  it('answers an empty result, not an error, for an unknown customer', async () => {
    expect((await lookup('nobody@example.com')).matches).toEqual([]);
  });

  it('shows a missed window: [earliest, latest] in the recipient zone and UTC, the rules, rule set and event that set it, and why it was missed', async () => {
    const result = await lookup(windowed.subscriptionId);
    const notice = result.notices.find((view) => view.noticeKey === windowed.missedKey);
    expect(notice?.verdict).toBe('Not sent: its send window closed before it could be sent (it is never sent late).');
    const window = notice?.window;
    expect(window).toMatchObject({ category: 'required', region: 'US-CA', timeZone: 'America/Los_Angeles', ruleSetVersion: windowed.ruleSetVersion });
    expect(window?.ruleIds).toEqual(windowed.ruleIds);
    expect(windowed.ruleIds.some((id) => id.startsWith('US-CA/'))).toBe(true);
    expect(window?.event).toMatchObject({ type: 'subscription.renewal', revision: 1, source: 'billing-service' });
    expect(window?.setBy).toContain(`of rule set ${windowed.ruleSetVersion} for region US-CA, planned from business event subscription.renewal revision 1`);
    expect(window?.latestLocal).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2} P[SD]T \(America\/Los_Angeles\)$/);
    expect(window?.events.map((entry) => entry.kind)).toEqual(['deferred_early', 'window_missed']);
    expect(window?.events[1]?.text).toMatch(/^window_missed: woken after the window closed/);
    expect(window?.status).toMatch(/^Missed: the window closed at .* before the notice could go out/);
    const scheduled = notice?.timeline.find((entry) => entry.kind === 'scheduled');
    expect(scheduled?.facts).toContainEqual({ label: 'rule set', value: windowed.ruleSetVersion });
    expect(scheduled?.facts).toContainEqual({ label: 'event', value: 'subscription.renewal revision 1' });
    expect(notice?.timeline.find((entry) => entry.kind === 'suppression')?.facts).toContainEqual({ label: 'reason code', value: 'window_missed' });
  });

  it('says the producer set the window of a notice scheduled without rules', async () => {
    const result = await lookup(scenario.duplicateCustomer.email);
    expect(result.notices[0]?.window).toMatchObject({
      ruleIds: [],
      ruleSetVersion: null,
      event: null,
      setBy: 'Set by the producer: its due time and deadline (no rules applied).',
    });
  });
});
