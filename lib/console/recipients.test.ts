import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preferenceFor, setPreference } from '@/db/queries/preferences';
import { addRecipientSuppression, findRecipientSuppression } from '@/db/queries/suppressions';
import type { Result } from '@/lib/http/refusal';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob, readJob } from '@/testing/jobs';
import { cancelNoticeForSupport, changeRecipientPreference, changeRecipientSuppression, loadRecipientView } from './recipients';

let t: TestDatabase;

function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(result.refusal.message);
  return result.data;
}

beforeAll(async () => {
  t = await createTestDatabase();
});
afterAll(async () => {
  await t.drop();
});

async function auditFor(email: string) {
  const rows = await t.pool.query(`select actor, action, reason, before, after from audit_log where target_type = 'recipient' and target_id = $1 order by id`, [
    email,
  ]);
  return rows.rows;
}

describe('support tools for a recipient', () => {
  it('adds and removes a manual suppression with a reason, audited with before and after; repeating changes nothing', async () => {
    const email = 'sam@example.com';
    const support = { actor: 'support@example.com', role: 'support' } as const;
    const added = unwrap(await changeRecipientSuppression(t.db, { email, action: 'add', reason: 'address belongs to someone else', ...support }));
    expect(added.changed).toBe(true);
    expect(added.view.suppression).toMatchObject({ reason: 'manual', note: 'support: address belongs to someone else' });
    expect(unwrap(await changeRecipientSuppression(t.db, { email, action: 'add', reason: 'again', ...support })).changed).toBe(false);
    const removed = unwrap(await changeRecipientSuppression(t.db, { email, action: 'remove', reason: 'customer confirmed the address', ...support }));
    expect(removed.changed).toBe(true);
    expect(await findRecipientSuppression(t.db, { email })).toBeNull();
    expect(await auditFor(email)).toMatchObject([
      {
        action: 'recipient.suppression_add',
        reason: 'address belongs to someone else',
        before: { suppressed: false },
        after: { suppressed: true, reason: 'manual' },
      },
      { action: 'recipient.suppression_remove', before: { suppressed: true, reason: 'manual' }, after: { suppressed: false } },
    ]);
    expect(removed.view.audit.map((row) => row.action)).toEqual(['recipient.suppression_remove', 'recipient.suppression_add']);
  });

  it('a complaint or hard bounce is lifted only by an operator or above: support and on-call are refused 403 and nothing changes', async () => {
    for (const reason of ['complaint', 'hard_bounce'] as const) {
      const email = `${reason}@example.com`;
      await addRecipientSuppression(t.db, { email, reason, sourceEventId: null, note: 'provider' });
      for (const role of ['support', 'oncall'] as const) {
        const refused = await changeRecipientSuppression(t.db, {
          email,
          action: 'remove',
          reason: 'customer says it was a mistake',
          actor: `${role}@example.com`,
          role,
        });
        expect(refused.ok).toBe(false);
        if (!refused.ok) {
          expect(refused.refusal.kind).toBe('forbidden');
          expect(refused.refusal.message).toContain('operator');
        }
        expect(await findRecipientSuppression(t.db, { email })).toMatchObject({ reason });
      }
      expect(await auditFor(email)).toEqual([]);
      const lifted = unwrap(
        await changeRecipientSuppression(t.db, {
          email,
          action: 'remove',
          reason: 'mailbox restored, confirmed by phone',
          actor: 'operator@example.com',
          role: 'operator',
        }),
      );
      expect(lifted.changed).toBe(true);
      expect(await findRecipientSuppression(t.db, { email })).toBeNull();
      expect(await auditFor(email)).toMatchObject([{ actor: 'operator@example.com', action: 'recipient.suppression_remove', before: { reason } }]);
    }
  });

  it('sets a courtesy preference as support, with history and audit; the view reads the customer’s own changes in words', async () => {
    const email = 'kim@example.com';
    await setPreference(t.db, { recipient: email, category: 'courtesy', channel: 'email', state: 'opted_out', source: 'one_click', actor: 'abc' });
    const back = await changeRecipientPreference(t.db, { email, state: 'opted_in', reason: 'customer asked on the phone', actor: 'support@example.com' });
    expect(back.changed).toBe(true);
    expect(await preferenceFor(t.db, { recipient: email, category: 'courtesy', channel: 'email' })).toBe('opted_in');
    expect(back.view.history.map((row) => row.text)).toEqual([
      'Opted back in to courtesy reminders by support',
      'Opted out of courtesy reminders in one click from an email (List-Unsubscribe)',
    ]);
    expect(await auditFor(email)).toMatchObject([{ action: 'recipient.preference_set', before: { state: 'opted_out' }, after: { state: 'opted_in' } }]);
    expect((await changeRecipientPreference(t.db, { email, state: 'opted_in', reason: 'again', actor: 'support@example.com' })).changed).toBe(false);
    expect(await auditFor(email)).toHaveLength(1);
  });

  it('cancels a pending notice (audited), and refuses a claimed one: the notice may already be on its way', async () => {
    const email = 'lee@example.com';
    const pending = await insertTestJob(t.db, { recipientEmail: email, dueAt: new Date(Date.now() + 3_600_000) });
    const claimed = await insertTestJob(t.db, { recipientEmail: email, state: 'claimed' });
    const view = await loadRecipientView(t.db, { email });
    expect(view.openNotices.map((notice) => notice.jobId).sort()).toEqual([pending.id, claimed.id].sort());
    expect(
      await cancelNoticeForSupport(t.db, { jobId: pending.id, reason: 'customer cancelled by phone', actor: 'support@example.com', now: new Date() }),
    ).toEqual({
      ok: true,
      data: { jobId: pending.id, state: 'cancelled' },
    });
    expect((await readJob(t.db, pending.id)).state).toBe('cancelled');
    const audit = await t.pool.query(`select actor, action, reason from audit_log where target_id = $1`, [pending.id]);
    expect(audit.rows).toEqual([{ actor: 'support@example.com', action: 'reminder.cancel', reason: 'customer cancelled by phone' }]);
    const refused = await cancelNoticeForSupport(t.db, { jobId: claimed.id, reason: 'too late?', actor: 'support@example.com', now: new Date() });
    expect(refused).toMatchObject({ ok: false, refusal: { kind: 'conflict' } });
    if (!refused.ok) expect(refused.refusal.message).toContain('the notice may already be on its way');
    expect((await readJob(t.db, claimed.id)).state).toBe('claimed');
  });
});
