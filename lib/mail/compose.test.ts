import MailComposer from 'nodemailer/lib/mail-composer';
import type Mail from 'nodemailer/lib/mailer';
import { describe, expect, it } from 'vitest';
import { prepareTemplates } from '@/lib/templates/load';
import { renderEmail } from '@/lib/templates/render';
import { activeNoticeConfig } from '@/lib/windows/active';
import { withCrlf } from '@/lib/templates/engine';
import { mailOptionsOf, writtenAtOnce, type OutgoingNotice } from './transport';

const { config } = activeNoticeConfig();
const addresses = { from: 'Notices <notices@example.com>', messageIdDomain: 'notices.example.com' };

/** The raw message, with the two things nodemailer would otherwise make up per build (the date and the boundary) fixed. */
async function build(options: Mail.Options): Promise<Buffer> {
  // baseBoundary is a MailComposer option @types/nodemailer does not list (mail-composer passes it to every MimeNode).
  const fixed = { ...options, date: new Date('2026-12-02T09:00:00Z'), baseBoundary: 'fixedboundary' };
  return new MailComposer(fixed).compile().build();
}

/** The same message as the transport writes it (writtenAtOnce, no stream), or null where it leaves the tree to `build()`. */
function atOnce(options: Mail.Options): Buffer | null {
  return writtenAtOnce(new MailComposer({ ...options, date: new Date('2026-12-02T09:00:00Z'), baseBoundary: 'fixedboundary' } as Mail.Options).compile());
}

/**
 * The same notice as nodemailer builds it all by itself: the parts as plain strings (the text with
 * the CRLF line breaks mailOptionsOf gives it), encoded by its own quoted-printable encoder (not
 * handed over `raw`, lib/mail/quoted-printable.ts), and the text encoding detected, as before it was set.
 */
function nodemailersOwn(options: Mail.Options, mail: OutgoingNotice): Mail.Options {
  const { textEncoding: _set, ...rest } = options;
  return { ...rest, text: withCrlf(mail.text), html: mail.html };
}

function notice(rendered: { subject: string; html: string; text: string }, index: number): OutgoingNotice {
  return {
    noticeKey: index.toString(16).padStart(64, '0'),
    to: 'ana.mueller@example.de',
    ...rendered,
    listUnsubscribe: { https: 'https://notices.example/u/abc', mailto: null },
  };
}

describe('the message nodemailer builds from a notice', () => {
  it('is byte-identical with what nodemailer builds by itself (its encoder, the encoding detected), for every shipped template in en and de', async () => {
    const set = await prepareTemplates(config);
    let built = 0;
    for (const [name, type] of Object.entries(config.noticeTypes)) {
      const entry = set.entries.get(type.template);
      if (!entry || entry.email.size === 0) continue;
      for (const locale of ['en', 'de']) {
        const rendered = await renderEmail(set, {
          template: type.template,
          noticeType: name,
          category: type.category,
          locale,
          timeZone: 'Europe/Berlin',
          payload: { ...entry.definition.sample, customer_name: 'Jürgen Müller-Lüdenscheidt' },
          anchorAt: new Date('2026-10-01T09:00:00Z'),
          windowClosesAt: new Date('2026-09-30T09:00:00Z'),
          code: 'ABCD2345EF',
          links: { manage: 'https://notices.example/r/abc?x=1&y=2', unsubscribe: 'https://notices.example/u/abc' },
          cancellable: type.cancel !== undefined,
        });
        const mail = notice(rendered, built);
        const options = mailOptionsOf(mail, addresses);
        const raw = await build(options);
        expect(raw.equals(await build(nodemailersOwn(options, mail))), `${name} ${locale}`).toBe(true);
        // Written at once, byte for byte what nodemailer's stream builds.
        expect(atOnce(options)?.equals(raw), `${name} ${locale}: written at once`).toBe(true);
        // Every line break CRLF already (the HTML templates are parsed so, lib/templates/engine.ts
        // parseHtml): SMTP's DATA transform has no LF to rewrite, after the claim.
        expect(/(?<!\r)\n/.test(raw.toString('latin1')), `${name} ${locale}: a bare LF`).toBe(false);
        // The parts went out raw, encoded here: the comparison covered our encoder.
        expect(options.html).toHaveProperty('raw');
        // The parts were encoded, not sent as 7bit: the encoding choice was exercised.
        expect(raw.toString('latin1')).toContain('Content-Transfer-Encoding: quoted-printable');
        built += 1;
      }
    }
    expect(built).toBe(2 * Object.values(config.noticeTypes).filter((type) => set.entries.get(type.template)?.email.size).length);
  });

  it('leaves a part nodemailer sends as it is (7bit: ASCII, short lines) to nodemailer, and the message is the same', async () => {
    const mail = notice(
      {
        subject: 'Your renewal',
        html: '<p>Your plan renews on 1 October.</p>',
        text: 'Your plan renews on 1 October.\nManage it: https://notices.example/r/abc\n',
      },
      2,
    );
    const options = mailOptionsOf(mail, addresses);
    expect(options.text).toBe(mail.text.replaceAll('\n', '\r\n'));
    expect(options.html).toBe(mail.html);
    const raw = await build(options);
    expect(raw.equals(await build(nodemailersOwn(options, mail)))).toBe(true);
    expect(raw.toString('latin1')).toContain('Content-Transfer-Encoding: 7bit');
    expect(atOnce(options)?.equals(raw)).toBe(true);
  });

  it('is written at once only for a tree it covers: a part nodemailer would encode itself is left to its stream', async () => {
    const mail = notice({ subject: 'Your renewal', html: '<p>Your plan renews on 1 October.</p>', text: 'Your plan renews on 1 October.\n' }, 3);
    const options = mailOptionsOf(mail, addresses);
    // An attachment is encoded (base64) by nodemailer's stream, and nests the alternatives under multipart/mixed.
    const withAttachment = { ...options, attachments: [{ filename: 'terms.txt', content: 'Terms.' }] };
    expect(atOnce(withAttachment)).toBeNull();
    // A part given as a string nodemailer encodes (quoted-printable: non-ASCII text).
    expect(atOnce({ ...options, text: 'Grüße\r\n' })).toBeNull();
    // Both still build, through the stream.
    expect((await build(withAttachment)).toString('latin1')).toContain('Content-Disposition: attachment; filename=terms.txt');
  });

  it('differs where detection would have chosen base64: text in another script (the comparison can tell)', async () => {
    const mail = notice({ subject: 'ご契約の更新のお知らせ', html: '<p>ご契約は十月一日に更新されます。</p>', text: 'ご契約は十月一日に更新されます。' }, 1);
    const options = mailOptionsOf(mail, addresses);
    const raw = await build(options);
    const before = await build(nodemailersOwn(options, mail));
    expect(raw.equals(before)).toBe(false);
    expect(before.toString('latin1')).toContain('Content-Transfer-Encoding: base64');
    expect(raw.toString('latin1')).not.toContain('Content-Transfer-Encoding: base64');
  });
});
