import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import fc from 'fast-check';
import DataStream from 'nodemailer/lib/smtp-connection/data-stream';
import { describe, expect, it } from 'vitest';
import { smtpData } from './smtp-data';

/** What nodemailer's DataStream writes for `message` given as one chunk: the bytes the SMTP connection sends for it. */
async function dataStreamOf(message: Buffer): Promise<Buffer> {
  const out: Buffer[] = [];
  const stream = new DataStream();
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      out.push(chunk);
      done();
    },
  });
  const done = pipeline(stream, sink);
  stream.end(message);
  await done;
  return Buffer.concat(out);
}

describe('smtpData', () => {
  it.each([
    ['empty', ''],
    ['CRLF ending', 'Subject: x\r\n\r\nhello\r\n'],
    ['no ending', 'hello'],
    ['CR ending', 'hello\r'],
    ['dot lines', '.starts\r\n.\r\nmid.dle\r\n..two\r\n.'],
    ['bare LF', 'a\nb\n.c\r\n\n'],
    ['leading LF dot', '\n.x'],
  ])('writes %s as DataStream does', async (_name, text) => {
    const message = Buffer.from(text, 'latin1');
    expect(smtpData(message).toString('latin1')).toBe((await dataStreamOf(message)).toString('latin1'));
  });

  it('writes any bytes as DataStream does', async () => {
    const bytes = fc.array(fc.constantFrom(0x2e, 0x0a, 0x0d, 0x41, 0x3d, 0x20, 0xc3), { maxLength: 200 });
    await fc.assert(
      fc.asyncProperty(bytes, async (array) => {
        const message = Buffer.from(array);
        expect(smtpData(message).equals(await dataStreamOf(message))).toBe(true);
      }),
      { numRuns: 500 },
    );
  });
});
