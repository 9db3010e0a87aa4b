import fc from 'fast-check';
import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { prepareTemplates } from '@/lib/templates/load';
import { renderCasesOf } from '@/testing/render-cases';
import { renderEmail } from '@/lib/templates/render';
import { activeNoticeConfig } from '@/lib/windows/active';
import { writeMessage } from './message';
import { mailOptionsOf, type OutgoingNotice } from './transport';

const { config } = activeNoticeConfig();
const date = new Date('2026-12-02T09:00:00Z');
const baseBoundary = '0123456789abcdef';

/** The options the transport gives MailComposer and writeMessage alike. */
const optionsOf = (mail: OutgoingNotice, from: string): Mail.Options => mailOptionsOf(mail, { from, messageIdDomain: 'notices.example.com' });

/** MailComposer's message, envelope and Message-ID for the same options, date and boundary. */
async function composed(options: Mail.Options, fixed: { date?: Date } = { date }) {
  const node = new MailComposer({ ...options, ...fixed, baseBoundary } as Mail.Options).compile();
  return { raw: await node.build(), envelope: node.getEnvelope(), messageId: node.messageId() };
}

function notice(overrides: Partial<OutgoingNotice> = {}): OutgoingNotice {
  return {
    noticeKey: 'ab'.repeat(32),
    to: 'ana.mueller@example.de',
    subject: 'Your renewal on 1 October',
    text: 'Hello Jürgen,\nyour plan renews on 1 October for 49,00 €, and a line long enough to be wrapped by the encoder at seventy-six.\n',
    html: '<p>Hello Jürgen, your plan renews on 1 October for 49,00 €.</p>',
    listUnsubscribe: { https: 'https://notices.example/u/abc', mailto: null },
    ...overrides,
  };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('writeMessage', () => {
  it('writes every shipped template in en and de byte for byte as MailComposer builds it, with its envelope and Message-ID', async () => {
    const set = await prepareTemplates(config);
    let written = 0;
    for (const { id, channel, request } of renderCasesOf(config)) {
      if (channel !== 'email') continue;
      const rendered = await renderEmail(set, { ...request, payload: { ...request.payload, customer_name: 'Jürgen Müller-Lüdenscheidt' } });
      const listUnsubscribe = request.links.unsubscribe ? { https: request.links.unsubscribe, mailto: 'mailto:u@notices.example' } : null;
      const options = optionsOf(notice({ ...rendered, listUnsubscribe }), 'Notices <notices@example.com>');
      const ours = writeMessage(options, { date, baseBoundary });
      const theirs = await composed(options);
      expect(ours, `${id}: written`).not.toBeNull();
      expect(ours?.raw.equals(theirs.raw), id).toBe(true);
      expect(ours?.envelope).toEqual(theirs.envelope);
      expect(ours?.messageId).toBe(theirs.messageId);
      written += 1;
    }
    expect(written).toBeGreaterThanOrEqual(4);
  });

  it('writes the Date MailComposer writes when none is given (the send path gives none)', async () => {
    vi.useFakeTimers({ toFake: ['Date'], now: new Date('2026-12-07T18:55:58.417Z') });
    const options = optionsOf(notice(), 'Notices <notices@example.com>');
    const ours = writeMessage(options, { baseBoundary });
    expect(ours?.raw.equals((await composed(options, {})).raw)).toBe(true);
    expect(ours?.raw.toString('latin1')).toContain('\r\nDate: Mon, 07 Dec 2026 18:55:58 +0000\r\n');
  });

  it('is MailComposer byte for byte for arbitrary subjects, senders, recipients and unsubscribe links, or leaves the message to it', async () => {
    const local = fc.stringMatching(/^[A-Za-z0-9._%+-]{1,30}$/);
    const label = fc.stringMatching(/^[A-Za-z0-9]([A-Za-z0-9-]{0,12}[A-Za-z0-9])?$/);
    const plainTo = fc.tuple(local, fc.array(label, { minLength: 2, maxLength: 4 })).map(([user, labels]) => `${user}@${labels.join('.')}`);
    const anyTo = fc.oneof(plainTo, fc.constantFrom('Ana Müller <ana@example.de>', 'ana@jõgeva.ee', '"ana b"@example.de', 'ana@localhost'));
    const from = fc.constantFrom(
      'Notices <notices@example.com>',
      'notices@example.com',
      'Zoë’s Coffee Box <hello@zoe.example>',
      '"Billing, Inc." <billing@example.com>',
    );
    let writtenCount = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.string({ unit: 'binary', minLength: 1, maxLength: 200 }),
        fc.stringMatching(/^[0-9a-f]{64}$/),
        anyTo,
        from,
        fc.option(fc.webUrl({ withQueryParameters: true }), { nil: null }),
        async (subject, noticeKey, to, sender, unsubscribe) => {
          const options = optionsOf(notice({ subject, noticeKey, to, listUnsubscribe: unsubscribe ? { https: unsubscribe, mailto: null } : null }), sender);
          const ours = writeMessage(options, { date, baseBoundary });
          if (plainAddress(to)) expect(ours).not.toBeNull();
          if (ours === null) return;
          writtenCount += 1;
          const theirs = await composed(options);
          expect(ours.raw.toString('latin1')).toBe(theirs.raw.toString('latin1'));
          expect(ours.envelope).toEqual(theirs.envelope);
        },
      ),
      { numRuns: 300 },
    );
    expect(writtenCount).toBeGreaterThan(100);
  });

  it('leaves to MailComposer what it does not cover: a recipient with a name or a Unicode domain, a part that is not raw, a header or option of its own', () => {
    const options = optionsOf(notice(), 'Notices <notices@example.com>');
    const headers = options.headers as Record<string, string>;
    expect(writeMessage(options, { date, baseBoundary })).not.toBeNull();
    expect(writeMessage({ ...options, to: 'Ana <ana@example.de>' })).toBeNull();
    expect(writeMessage({ ...options, to: 'ana@jõgeva.ee' })).toBeNull();
    expect(writeMessage({ ...options, text: 'plain 7bit text' })).toBeNull();
    expect(writeMessage({ ...options, headers: { ...headers, Subject: 'two subjects' } })).toBeNull();
    expect(writeMessage({ ...options, headers: { ...headers, 'reply-to': 'Ana <ana@example.de>' } })).toBeNull();
    expect(writeMessage({ ...options, headers: { ...headers, References: '<a@b> <c@d>' } })).toBeNull();
    expect(writeMessage({ ...options, cc: 'ben@example.de' })).toBeNull();
    expect(writeMessage({ ...options, attachments: [{ filename: 'terms.txt', content: 'Terms.' }] })).toBeNull();
    expect(writeMessage({ ...options, textEncoding: 'base64' })).toBeNull();
  });

  it('draws a fresh boundary for each message', () => {
    const options = optionsOf(notice(), 'Notices <notices@example.com>');
    const boundaries = new Set(Array.from({ length: 1_100 }, () => /boundary="([^"]+)"/.exec(writeMessage(options)?.raw.toString('latin1') ?? '')?.[1]));
    expect(boundaries.size).toBe(1_100);
  });
});

function plainAddress(to: string): boolean {
  return /^[A-Za-z0-9._%+-]+@[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)+$/.test(to);
}
