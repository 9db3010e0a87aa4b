import { randomUUID } from 'node:crypto';
import { expect, test } from '@/e2e/fixtures/test';

/**
 * Lifting a suppression the provider reported, through `next start`: support is refused 403 for
 * a complaint and a hard bounce (the row and the audit log unchanged) and still lifts a manual
 * one (the control); an operator lifts a complaint, with the reason audited.
 */

test('a complaint or hard bounce is lifted by an operator, not by support; support still lifts a manual suppression', async ({ apiAs, sql, baseURL }) => {
  const headers = { origin: baseURL ?? '' };
  const support = await apiAs('support');
  const operator = await apiAs('operator');
  const suppressed = async (email: string) => sql('select email, reason, note, created_at from recipient_suppressions where email = $1', [email]);
  const audited = async (email: string) =>
    sql<{ actor: string; reason: string }>("select actor, reason from audit_log where target_type = 'recipient' and target_id = $1", [email]);

  for (const reason of ['complaint', 'hard_bounce']) {
    const email = `${reason}.${randomUUID().slice(0, 8)}@reported.example.com`;
    await sql("insert into recipient_suppressions (email, reason, note) values ($1, $2, 'reported by the provider')", [email, reason]);
    const before = await suppressed(email);
    const refused = await support.post('/api/console/recipients/suppression', {
      headers,
      data: { email, action: 'remove', reason: 'customer says it was a mistake' },
    });
    expect(refused.status(), reason).toBe(403);
    expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('operator');
    expect(await suppressed(email)).toEqual(before);
    expect(await audited(email)).toEqual([]);

    const lifted = await operator.post('/api/console/recipients/suppression', {
      headers,
      data: { email, action: 'remove', reason: 'mailbox restored, confirmed by phone' },
    });
    expect(lifted.status(), reason).toBe(200);
    expect(await suppressed(email)).toEqual([]);
    expect(await audited(email)).toEqual([{ actor: expect.stringContaining('operator'), reason: 'mailbox restored, confirmed by phone' }]);
  }

  const manual = `manual.${randomUUID().slice(0, 8)}@reported.example.com`;
  await sql("insert into recipient_suppressions (email, reason, note) values ($1, 'manual', 'support: wrong person')", [manual]);
  const removed = await support.post('/api/console/recipients/suppression', {
    headers,
    data: { email: manual, action: 'remove', reason: 'right person after all' },
  });
  expect(removed.status()).toBe(200);
  expect(await suppressed(manual)).toEqual([]);
});
