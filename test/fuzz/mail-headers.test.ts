import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderNotice } from '@/lib/mail/render';
import { startSmtpSink, type SmtpSink } from '@/testing/smtp-sink';
import { createMailTransport, type MailTransport } from '@/lib/mail/transport';
import { activeNoticeConfig } from '@/lib/windows/active';
import { fuzzParameters, hostileString, poisoned } from './arbitraries';

const { config } = activeNoticeConfig();

/**
 * Producer payload values reach the Subject line (plan name) and the body. Through the real
 * renderer, the real nodemailer transport and a real SMTP peer, a CRLF in them must never
 * become a header of its own (Bcc, a second Subject) nor a second envelope recipient.
 */

let sink: SmtpSink;
let transport: MailTransport;

beforeAll(async () => {
  sink = await startSmtpSink();
  transport = createMailTransport({
    smtpUrl: sink.url,
    timeoutMs: 5_000,
    from: 'Notices <notices@example.org>',
    messageIdDomain: 'example.org',
    maxConnections: 2,
  });
});

afterAll(async () => {
  transport.close();
  await sink.stop();
});

const injected = fc.oneof(
  poisoned(fc.constantFrom('Team', 'Pro plan', 'Jane')),
  hostileString.filter((text) => text.length < 2_000),
  fc.constantFrom(
    'Team\r\nBcc: attacker@example.com',
    'Team\nSubject: second',
    'Team\r\n\r\n<html>body</html>',
    'Team\rX-Injected: 1',
    '=?utf-8?q?encoded?=\r\nBcc: a@b.c',
    'Team\u2028Bcc: attacker@example.com',
  ),
);

describe('mail headers with hostile payload values', () => {
  it('one Subject, no injected header, one envelope recipient', async () => {
    let counter = 0;
    await fc.assert(
      fc.asyncProperty(injected, injected, fc.constantFrom('renewal_notice_t72', 'renewal_notice_t24', 'payment_recovery'), async (plan, name, noticeType) => {
        counter += 1;
        const noticeKey = counter.toString(16).padStart(64, '0');
        const rendered = await renderNotice({
          config,
          job: {
            noticeType,
            category: 'courtesy',
            payload: { plan_name: plan, customer_name: name, amount: '49.00', currency: 'EUR', reference: plan },
            recipientLocale: null,
            recipientTimeZone: 'UTC',
            anchorAt: new Date('2026-10-01T09:00:00Z'),
            deadlineAt: new Date('2026-09-30T09:00:00Z'),
          },
          oneTimeCode: 'OTC-123456',
          links: { manage: 'https://example.org/c/x' },
        });
        const outcome = await transport.send({ to: 'customer@example.com', subject: rendered.subject, text: rendered.text, html: rendered.html, noticeKey });
        expect(outcome.kind).toBe('accepted');
        const message = sink.messages().find((sunk) => sunk.messageId?.includes(noticeKey.slice(0, 32)));
        expect(message, 'the sink did not receive the message').toBeDefined();
        if (!message) return;
        expect(message.to).toEqual(['customer@example.com']);
        const headerBlock = message.raw.split(/\r?\n\r?\n/)[0] ?? '';
        const names = headerBlock
          .split(/\r?\n/)
          .filter((line) => /^[^\s]/.test(line))
          .map((line) => line.slice(0, Math.max(0, line.indexOf(':'))).toLowerCase());
        expect(names.filter((header) => header === 'subject')).toHaveLength(1);
        expect(names.filter((header) => header === 'to')).toHaveLength(1);
        for (const forbidden of ['bcc', 'cc', 'x-injected', 'set-cookie']) expect(names, `injected ${forbidden} header`).not.toContain(forbidden);
      }),
      fuzzParameters(40),
    );
  });
});
