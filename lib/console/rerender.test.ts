import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { getLedgerRow } from '@/db/queries/ledger/read';
import { findTemplateVersion } from '@/db/queries/template-versions';
import { createPostmarkTransport } from '@/lib/channels/postmark/transport';
import { createBatchingWakeupHandler } from '@/lib/jobs/handle-batch';
import { createWakeupHandler, type SendPathDeps } from '@/lib/jobs/handle-wakeup';
import { createDomainRateLimiter, type DomainRateLimiter } from '@/lib/jobs/rate-limit';
import { createLogger } from '@/lib/log';
import { createMailTransport, type EmailTransport } from '@/lib/mail/transport';
import { createSmsTransport, statusCallbackUrl } from '@/lib/sms/transport';
import { loadNoticeConfig, type NoticeConfig } from '@/lib/windows/load-config';
import { createTestDatabase, type TestDatabase } from '@/testing/db';
import { insertTestJob } from '@/testing/jobs';
import { startPostmarkPeer, type PostmarkPeer } from '@/testing/postmark-peer';
import { insertSentNotice } from '@/testing/recipient';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { startTwilioPeer, type TwilioPeer } from '@/testing/twilio-peer';
import { MASKED_CODE, rerenderSentNotice } from './rerender';

/**
 * "What the customer received" (issue 30 item 5) over real PostgreSQL and the real send paths
 * (SMTP sink, the official postmark and twilio clients on their local peers): both commit
 * statements record the template version the message was rendered from; after the operator
 * edits the file and the process loads the edit, the lookup's re-render still shows what the
 * notice was sent with; a notice sent before versions were recorded says so.
 */

let t: TestDatabase;
let sink: SmtpSink;
let postmark: PostmarkPeer;
let twilio: TwilioPeer;
let limiter: DomainRateLimiter;
const dirs: string[] = [];
const logger = createLogger('test', 'silent');
const baseUrl = 'https://notices.test';

/** A copy of the shipped configuration and templates the test may edit; each load is a new set, as a restart is. */
function editableConfig(): { dir: string; load: () => NoticeConfig } {
  const dir = mkdtempSync(join(tmpdir(), 'rerender-'));
  dirs.push(dir);
  cpSync('config/templates', join(dir, 'templates'), { recursive: true });
  writeFileSync(join(dir, 'notice-ledger.json'), readFileSync('config/notice-ledger.json', 'utf8'));
  return { dir, load: () => loadNoticeConfig(join(dir, 'notice-ledger.json')).config };
}

function depsFor(noticeConfig: NoticeConfig, mail: EmailTransport, extra: Partial<SendPathDeps> = {}): SendPathDeps {
  return {
    db: t.db,
    mail,
    rateLimiter: limiter,
    workerId: 'rerender-test',
    logger,
    settings: {
      mode: 'enforce',
      noticeConfig,
      retryBaseMs: 1_000,
      retryCapMs: 10_000,
      maxAttempts: 3,
      secret: process.env.NOTICE_KEY_SECRET ?? '',
      cancelBaseUrl: baseUrl,
      maxTokenWaitMs: 1_000,
    },
    ...extra,
  };
}

const smtp = () => createMailTransport({ smtpUrl: sink.url, timeoutMs: 5_000, from: 'Notices <n@notices.test>', messageIdDomain: 'notices.test' });

let deliveries = 0;
const delivery = (jobId: string) => {
  deliveries += 1;
  return { wakeup: { jobId }, messageId: `rerender-${String(deliveries)}`, signal: new AbortController().signal };
};

const rerender = (id: string, noticeConfig: NoticeConfig) => rerenderSentNotice(t.db, { id, actor: 'support@notices.test', baseUrl, noticeConfig });

beforeAll(async () => {
  t = await createTestDatabase();
  sink = await startSmtpSink();
  postmark = await startPostmarkPeer();
  twilio = await startTwilioPeer();
  limiter = await createDomainRateLimiter({ pool: t.pool, pointsPerSecond: 10_000 });
});

afterAll(async () => {
  await sink?.stop();
  await postmark?.stop();
  await twilio?.stop();
  await t?.drop();
  for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
});

describe('the send records the template version it rendered from', () => {
  it('the single path: the ledger row names a stored version of exactly the files the message came from, one row per version', async () => {
    const { load } = editableConfig();
    const config = load();
    const handler = createWakeupHandler(depsFor(config, smtp()));
    const [en, alsoEn, de] = await Promise.all([insertTestJob(t.db, {}), insertTestJob(t.db, {}), insertTestJob(t.db, { recipientLocale: 'de-AT' })]);
    for (const job of [en, alsoEn, de]) expect(await handler(delivery(job.id))).toEqual({ ack: true });
    const ids = await Promise.all([en, alsoEn, de].map(async (job) => (await getLedgerRow(t.db, { noticeKey: job.noticeKey }))?.templateVersionId ?? null));
    expect(ids.every((id) => id !== null && /^[0-9a-f]{64}$/.test(id))).toBe(true);
    // One version for the two English notices, another for the German one (its files and its strings differ).
    expect(ids[0]).toBe(ids[1]);
    expect(ids[2]).not.toBe(ids[0]);
    const german = await findTemplateVersion(t.db, { id: ids[2] ?? '' });
    expect(german).toMatchObject({ templateId: 'renewal_notice_t72', channel: 'email', locale: 'de' });
    const files = Object.keys((german?.content as { files: Record<string, string> }).files).sort();
    expect(files).toEqual([
      '_layout/email.mjml',
      '_layout/strings.de.json',
      '_layout/text.liquid',
      'renewal_notice_t72/email.de.html.liquid',
      'renewal_notice_t72/email.de.subject.liquid',
      ...(files.includes('renewal_notice_t72/email.de.text.liquid') ? ['renewal_notice_t72/email.de.text.liquid'] : []),
    ]);
    expect((german?.content as { files: Record<string, string> }).files['renewal_notice_t72/email.de.html.liquid']).toBe(
      readFileSync('config/templates/renewal_notice_t72/email.de.html.liquid', 'utf8'),
    );
    const { rows } = await t.pool.query<{ count: number }>('select count(*)::int as count from template_versions where id = any($1)', [ids]);
    expect(rows[0]?.count).toBe(2);
  });

  it('the batch path: every accepted item of one Postmark batch call records its version in the one commit statement', async () => {
    const config = editableConfig().load();
    const mail = createPostmarkTransport({
      serverToken: postmark.serverToken,
      apiBaseUrl: postmark.baseUrl,
      messageStream: 'outbound',
      from: 'Notices <notices@notices.test>',
      timeoutMs: 5_000,
    });
    const handler = createBatchingWakeupHandler(depsFor(config, mail), { size: 3, gatherMs: 500, concurrency: 8 });
    const jobs = await Promise.all([insertTestJob(t.db, {}), insertTestJob(t.db, { recipientLocale: 'de' }), insertTestJob(t.db, {})]);
    expect(await Promise.all(jobs.map((job) => handler(delivery(job.id))))).toEqual(jobs.map(() => ({ ack: true })));
    const rows = await Promise.all(jobs.map((job) => getLedgerRow(t.db, { noticeKey: job.noticeKey })));
    expect(rows.map((row) => row?.state)).toEqual(['sent', 'sent', 'sent']);
    expect(rows.every((row) => row?.templateVersionId)).toBe(true);
    expect(rows[0]?.templateVersionId).toBe(rows[2]?.templateVersionId);
    expect(rows[1]?.templateVersionId).not.toBe(rows[0]?.templateVersionId);
  });

  it('the SMS channel: a text records its sms template version, and the re-render is the body as sent', async () => {
    const config = editableConfig().load();
    const handler = createWakeupHandler(
      depsFor(config, smtp(), {
        sms: {
          transport: createSmsTransport({
            twilio: {
              accountSid: twilio.accountSid,
              authToken: twilio.authToken,
              sender: { from: '+15005550006' },
              apiBaseUrl: twilio.baseUrl,
              timeoutMs: 5_000,
            },
            statusCallbackFor: (correlation) => statusCallbackUrl(baseUrl, correlation),
          }),
          sender: '+15005550006',
          rateLimiter: limiter,
        },
      }),
    );
    const job = await insertTestJob(t.db, { channel: 'sms', recipientPhone: '+447700900123', recipientLocale: 'de' });
    expect(await handler(delivery(job.id))).toEqual({ ack: true });
    const row = await getLedgerRow(t.db, { noticeKey: job.noticeKey });
    expect(row?.state).toBe('sent');
    const version = await findTemplateVersion(t.db, { id: row?.templateVersionId ?? '' });
    expect(version).toMatchObject({ channel: 'sms', locale: 'de', templateId: 'renewal_notice_t72' });
    const shown = await rerender(job.noticeKey, config);
    if (!shown.ok) throw new Error(shown.refusal.message);
    expect(shown.data.status).toBe('rendered');
    expect(shown.data.email).toBeNull();
    // The body as Twilio got it, but for the signed link, which the re-render does not show.
    const sent = twilio.messages().find((message) => message.to === '+447700900123');
    const masked = (sent?.body ?? '').replace(/https:\/\/notices\.test\/r\/\S+/, 'https://notices.test/r/signed-link-not-shown');
    expect(shown.data.sms?.body).toBe(masked);
  });
});

describe('the re-render uses the version recorded at send, not the files deployed now', () => {
  it('after the template file is edited and loaded again, lookup still shows the old wording, in English and German', async () => {
    const { dir, load } = editableConfig();
    const before = load();
    const handler = createWakeupHandler(depsFor(before, smtp()));
    const en = await insertTestJob(t.db, {});
    const de = await insertTestJob(t.db, { recipientLocale: 'de' });
    for (const job of [en, de]) expect(await handler(delivery(job.id))).toEqual({ ack: true });
    const sentEn = sink.messages().find((message) => message.to.includes(en.recipientEmail ?? ''));
    expect(sentEn).toBeDefined();

    // The operator edits both locales' subject and body, and the console restarts with them.
    for (const locale of ['en', 'de']) {
      const subject = join(dir, `templates/renewal_notice_t72/email.${locale}.subject.liquid`);
      writeFileSync(subject, `EDITED ${readFileSync(subject, 'utf8')}`);
      const body = join(dir, `templates/renewal_notice_t72/email.${locale}.html.liquid`);
      writeFileSync(body, `<p>Edited after the send</p>${readFileSync(body, 'utf8')}`);
    }
    const after = load();
    expect(after).not.toBe(before);

    const shownEn = await rerender(en.noticeKey, after);
    const shownDe = await rerender(de.id, after);
    if (!shownEn.ok || !shownDe.ok) throw new Error('the re-render refused a sent notice');
    for (const shown of [shownEn.data, shownDe.data]) {
      expect(shown.status).toBe('rendered');
      expect(shown.email?.subject).not.toContain('EDITED');
      expect(shown.email?.html).not.toContain('Edited after the send');
      expect(shown.email?.text).not.toContain('Edited after the send');
      expect(shown.message).toContain(`template version ${shown.version?.shortId ?? '?'}`);
      expect(shown.message).toContain('the evidence pack holds the exact bytes');
    }
    // The subject is the one the customer got; the German notice speaks German.
    expect(shownEn.data.email?.subject).toBe(sentEn?.subject);
    expect(shownEn.data.email?.locale).toBe('en');
    expect(shownDe.data.email?.locale).toBe('de');
    expect(shownDe.data.email?.text).toMatch(/49,00/);
    // The one-time code is never shown: the re-render has a placeholder where the mail had the code.
    expect(shownEn.data.email?.text).toContain(MASKED_CODE);
    expect(shownEn.data.email?.text).not.toMatch(/confirmation code: [A-Z2-9]{10}/);

    // Control: the files deployed now do render the edit, so the test above sees the difference.
    const handlerAfter = createWakeupHandler(depsFor(after, smtp()));
    const later = await insertTestJob(t.db, {});
    expect(await handlerAfter(delivery(later.id))).toEqual({ ack: true });
    const shownLater = await rerender(later.noticeKey, after);
    if (!shownLater.ok) throw new Error(shownLater.refusal.message);
    expect(shownLater.data.email?.subject).toContain('EDITED');
    expect(shownLater.data.email?.html).toContain('Edited after the send');
    expect(shownLater.data.version?.id).not.toBe(shownEn.data.version?.id);

    const audit = await t.pool.query<{ actor: string }>(`select actor from audit_log where action = 'notice.rerender' and target_id = $1`, [en.noticeKey]);
    expect(audit.rows).toEqual([{ actor: 'support@notices.test' }]);
  });

  it('a notice sent before versions were recorded says so and renders nothing; one not sent or unknown is refused', async () => {
    const config = editableConfig().load();
    const old = await insertSentNotice(t.db, {});
    const shown = await rerender(old.job.noticeKey, config);
    if (!shown.ok) throw new Error(shown.refusal.message);
    expect(shown.data).toMatchObject({ status: 'unknown_version', version: null, email: null, sms: null });
    expect(shown.data.message).toMatch(/template version this notice was sent with is unknown/);

    const pending = await insertTestJob(t.db, {});
    const unsent = await rerender(pending.id, config);
    expect(unsent.ok ? null : unsent.refusal.kind).toBe('not_found');
    const nobody = await rerender('0'.repeat(64), config);
    expect(nobody.ok ? null : nobody.refusal.kind).toBe('not_found');
  });
});
