import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMailTransport } from '@/lib/mail/transport';
import { activeNoticeConfig } from '@/lib/windows/active';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { loadTemplatesView, sendTestNotice } from './templates';
import { createTestSendThrottle, type TestSendThrottle } from './test-send-throttle';

const { config } = activeNoticeConfig();
let t: TestDatabase;
let sink: SmtpSink;
let ample: TestSendThrottle;
const mail = () =>
  createMailTransport({ smtpUrl: sink.url, timeoutMs: 5_000, from: 'Notices <n@example.org>', messageIdDomain: 'example.org', maxConnections: 1 });

async function auditRows() {
  const { rows } = await t.pool.query<{ action: string; target_id: string; reason: string; after: unknown }>(
    `select action, target_id, reason, after from audit_log where action = 'template.test_send' order by id`,
  );
  return rows;
}

beforeAll(async () => {
  t = await createTestDatabase();
  sink = await startSmtpSink();
  ample = createTestSendThrottle({ pool: t.pool, limit: 1_000, windowMs: 3_600_000 });
});
afterAll(async () => {
  await sink?.stop();
  await t?.drop();
});
beforeEach(() => sink.setFault({ kind: 'none' }));

describe('the Templates page', () => {
  it('renders every template × channel × locale with its sample, none failing', async () => {
    const view = await loadTemplatesView(config, new Date('2026-09-24T12:00:00Z'));
    expect(view.sampleAnchor).toBe('2026-10-01T09:00:00.000Z');
    const renderings = view.templates.flatMap((template) => template.renderings.map((rendering) => ({ id: template.id, ...rendering })));
    expect(renderings.filter((rendering) => 'error' in rendering)).toEqual([]);
    expect(renderings.map((rendering) => `${rendering.id}:${rendering.channel}.${rendering.locale}`)).toContain('payment_recovery:sms.de');
    expect(view.templates.find((template) => template.id === 'payment_recovery')?.variables).toEqual([
      { name: 'customer_name', type: 'string', sample: 'Ada Lovelace' },
      { name: 'amount', type: 'decimal', sample: '120.50' },
      { name: 'currency', type: 'currency', sample: 'EUR' },
      { name: 'reference', type: 'string', sample: 'RC-2026-0042' },
    ]);
  });

  it('sends a test through the real transport, audited with the domain and never the body or address', async () => {
    const result = await sendTestNotice(t.db, {
      config,
      mail,
      template: 'renewal_notice_t72',
      locale: 'de',
      to: ' Ops.Person@Example.TEST ',
      actor: 'user:op',
      throttle: ample,
    });
    expect(result).toMatchObject({ ok: true, data: { template: 'renewal_notice_t72', locale: 'de', domain: 'example.test' } });
    const [message] = await sink.waitFor((messages) => messages.some((m) => m.to.includes('ops.person@example.test')));
    expect(message?.subject).toMatch(/^\[Test\] Ihr Abo Pro annual verlängert sich am/);
    const rows = await auditRows();
    expect(rows).toEqual([
      {
        action: 'template.test_send',
        target_id: 'renewal_notice_t72/email.de',
        reason: 'test to an address at example.test',
        after: { template: 'renewal_notice_t72', locale: 'de', domain: 'example.test' },
      },
    ]);
    expect(JSON.stringify(rows)).not.toMatch(/ops\.person|Verwalten|SAMPLE2345/);
  });

  it('refuses a bad address (422), an unknown template or locale (404) and a relay that says no (503), recording nothing', async () => {
    const before = (await auditRows()).length;
    const bad = await sendTestNotice(t.db, {
      config,
      mail,
      template: 'renewal_notice_t72',
      locale: 'en',
      to: 'not an address',
      actor: 'user:op',
      throttle: ample,
    });
    expect(bad).toMatchObject({ ok: false, refusal: { kind: 'unprocessable', code: 'invalid_address' } });
    const twoAddresses = await sendTestNotice(t.db, {
      config,
      mail,
      template: 'renewal_notice_t72',
      locale: 'en',
      to: 'a@example.test, b@example.test',
      actor: 'user:op',
      throttle: ample,
    });
    expect(twoAddresses).toMatchObject({ ok: false, refusal: { kind: 'unprocessable' } });
    expect(await sendTestNotice(t.db, { config, mail, template: 'nope', locale: 'en', to: 'a@example.test', actor: 'user:op', throttle: ample })).toMatchObject(
      {
        ok: false,
        refusal: { kind: 'not_found' },
      },
    );
    expect(
      await sendTestNotice(t.db, { config, mail, template: 'auto_renewal_notice', locale: 'de', to: 'a@example.test', actor: 'user:op', throttle: ample }),
    ).toMatchObject({
      ok: false,
      refusal: { kind: 'not_found' },
    });
    sink.setFault({ kind: 'reject', code: 550, times: 1 });
    expect(
      await sendTestNotice(t.db, { config, mail, template: 'payment_recovery', locale: 'en', to: 'a@example.test', actor: 'user:op', throttle: ample }),
    ).toMatchObject({
      ok: false,
      refusal: { kind: 'unavailable', code: 'relay_refused' },
    });
    expect((await auditRows()).length).toBe(before);
  });

  it('refuses a test past the per-user limit with 429 and a retry time, sending and recording nothing; another user still sends', async () => {
    const throttle = createTestSendThrottle({ pool: t.pool, limit: 2, windowMs: 3_600_000 });
    const send = (actor: string, to: string) => sendTestNotice(t.db, { config, mail, template: 'payment_recovery', locale: 'en', to, actor, throttle });
    expect(await send('user:limited', 'one@limit.test')).toMatchObject({ ok: true });
    expect(await send('user:limited', 'two@limit.test')).toMatchObject({ ok: true });
    const audited = (await auditRows()).length;
    const refused = await send('user:limited', 'three@limit.test');
    expect(refused).toMatchObject({ ok: false, refusal: { kind: 'rate_limited', code: 'test_send_limit' } });
    if (!refused.ok) expect(Number(refused.refusal.headers?.['retry-after'])).toBeGreaterThan(0);
    expect(await send('user:other', 'four@limit.test')).toMatchObject({ ok: true });
    await sink.waitFor((messages) => messages.some((m) => m.to.includes('four@limit.test')));
    expect(sink.messages().some((m) => m.to.includes('three@limit.test'))).toBe(false);
    expect((await auditRows()).length).toBe(audited + 1);
  });
});
